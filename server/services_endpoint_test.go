package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// placedAllocs registers a node and a job of count allocations and returns
// them once placed.
func placedAllocs(t *testing.T, s *Server, node *structs.Node, jobID string, count int) []*structs.Allocation {
	t.Helper()
	registerNode(t, s, node)
	resp := registerJob(t, s, testJob(jobID, count, 100, 64))
	waitEvalStatus(t, s, resp.EvalID, structs.EvalStatusComplete)
	allocs := allocsOf(t, s, jobID, structs.AllocDesiredStatusRun)
	if len(allocs) != count {
		t.Fatalf("placed %d allocs, want %d", len(allocs), count)
	}
	return allocs
}

func registration(a *structs.Allocation, name string, port int, tags ...string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID: structs.ServiceRegistrationID(a.ID, "app", name, "http"), ServiceName: name,
		NodeID: a.NodeID, JobID: "forged", AllocID: a.ID, Address: "127.0.0.1", Port: port, Tags: tags,
	}
}

func upsertServices(t *testing.T, s *Server, node *structs.Node, regs ...*structs.ServiceRegistration) *structs.ServiceRegistrationUpsertResponse {
	t.Helper()
	resp, err := s.ServiceRegistrationUpsert(context.Background(), &structs.ServiceRegistrationUpsertRequest{
		NodeID: node.ID, SecretID: node.SecretID, Services: regs,
	})
	if err != nil {
		t.Fatalf("ServiceRegistrationUpsert: %v", err)
	}
	return resp
}

func serviceInstances(t *testing.T, s *Server, name string) []*structs.ServiceRegistration {
	t.Helper()
	resp, err := s.ServiceRegistrationGet(context.Background(), &structs.ServiceRegistrationByNameRequest{ServiceName: name})
	if err != nil {
		t.Fatalf("ServiceRegistrationGet %s: %v", name, err)
	}
	return resp.Services
}

func TestServiceRegistrationsLiveWithTheirAllocs(t *testing.T) {
	s := newTestServer(t, nil)
	node := testNode("node-1", 4000, 4096)
	allocs := placedAllocs(t, s, node, "web", 2)

	first := upsertServices(t, s, node, registration(allocs[0], "web", 20001, "b", "a"), registration(allocs[1], "web", 20002, "c"))
	if first.Index == 0 {
		t.Fatal("first registration wrote nothing")
	}
	got := serviceInstances(t, s, "web")
	if len(got) != 2 || got[0].JobID != "web" || got[0].Namespace != "default" || got[0].Datacenter != "dc1" || got[0].CreateIndex != first.Index {
		t.Fatalf("instances = %+v, want 2 of job web (the server's, not the client's) in dc1", got)
	}
	// Registering the same again writes nothing (an agent restart).
	if again := upsertServices(t, s, node, registration(allocs[0], "web", 20001, "b", "a")); again.Index != 0 {
		t.Errorf("unchanged registration wrote at index %d", again.Index)
	}
	list, err := s.ServiceRegistrationList(context.Background(), &structs.ServiceRegistrationListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Services) != 1 || len(list.Services[0].Services) != 1 || strings.Join(list.Services[0].Services[0].Tags, ",") != "a,b,c" {
		t.Fatalf("list = %+v, want one namespace with web tagged a,b,c", list.Services)
	}

	// A blocking read wakes when the allocation stops on its node.
	woke := make(chan []*structs.ServiceRegistration, 1)
	go func() {
		resp, err := s.ServiceRegistrationGet(context.Background(), &structs.ServiceRegistrationByNameRequest{
			ServiceName: "web", QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index},
		})
		if err != nil {
			t.Errorf("blocking get: %v", err)
		}
		if resp == nil {
			woke <- nil
			return
		}
		woke <- resp.Services
	}()
	_, err = s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: node.ID, SecretID: node.SecretID,
		Alloc: []*structs.Allocation{{ID: allocs[0].ID, ClientStatus: structs.AllocClientStatusFailed}}})
	if err != nil {
		t.Fatal(err)
	}
	if left := <-woke; len(left) != 1 || left[0].AllocID != allocs[1].ID {
		t.Fatalf("after alloc 0 failed, instances = %+v, want only alloc 1's", left)
	}
	// A late registration of the failed allocation does not bring it back.
	upsertServices(t, s, node, registration(allocs[0], "web", 20001))
	if got := serviceInstances(t, s, "web"); len(got) != 1 {
		t.Fatalf("late registration of a failed alloc stored: %+v", got)
	}
	// The node goes down: nothing it registered lingers.
	if _, err := s.NodeUpdateStatus(context.Background(), &structs.NodeUpdateStatusRequest{NodeID: node.ID, SecretID: node.SecretID, Status: structs.NodeStatusDown}); err != nil {
		t.Fatal(err)
	}
	if got := serviceInstances(t, s, "web"); len(got) != 0 {
		t.Fatalf("instances of a down node = %+v, want none", got)
	}
}

func TestServiceRegistrationRefusals(t *testing.T) {
	s := newTestServer(t, nil)
	node := testNode("node-1", 4000, 4096)
	allocs := placedAllocs(t, s, node, "web", 1)
	other := testNode("node-2", 4000, 4096)
	registerNode(t, s, other)
	tests := []struct {
		name string
		req  *structs.ServiceRegistrationUpsertRequest
		want string
	}{
		{"wrong secret", &structs.ServiceRegistrationUpsertRequest{NodeID: node.ID, SecretID: "nope", Services: []*structs.ServiceRegistration{registration(allocs[0], "web", 1)}}, "secret ID does not match"},
		{"another node's alloc", &structs.ServiceRegistrationUpsertRequest{NodeID: other.ID, SecretID: other.SecretID, Services: []*structs.ServiceRegistration{registration(allocs[0], "web", 1)}}, "placed on another node"},
		{"no name", &structs.ServiceRegistrationUpsertRequest{NodeID: node.ID, SecretID: node.SecretID, Services: []*structs.ServiceRegistration{registration(allocs[0], "", 1)}}, "ServiceName is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ServiceRegistrationUpsert(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	upsertServices(t, s, node, registration(allocs[0], "web", 1))
	id := structs.ServiceRegistrationID(allocs[0].ID, "app", "web", "http")
	if _, err := s.ServiceRegistrationDelete(context.Background(), &structs.ServiceRegistrationDeleteRequest{IDs: []string{"nope"}}); err == nil || structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("delete unknown = %v, want not found", err)
	}
	if _, err := s.ServiceRegistrationDelete(context.Background(), &structs.ServiceRegistrationDeleteRequest{NodeID: other.ID, SecretID: other.SecretID, AllocIDs: []string{allocs[0].ID}}); err == nil {
		t.Error("another node deleted the alloc's services")
	}
	resp, err := s.ServiceRegistrationDelete(context.Background(), &structs.ServiceRegistrationDeleteRequest{IDs: []string{id}})
	if err != nil || resp.Deleted != 1 {
		t.Fatalf("delete by ID = %+v, %v", resp, err)
	}
}

func TestServiceRegistrationsSurviveSnapshots(t *testing.T) {
	s := newTestServer(t, nil)
	node := testNode("node-1", 4000, 4096)
	allocs := placedAllocs(t, s, node, "web", 1)
	upsertServices(t, s, node, registration(allocs[0], "web", 20001, "x"))
	data := snapshotBytes(t, s)
	s2 := newTestServer(t, nil)
	if err := s2.fsm.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	got := serviceInstances(t, s2, "web")
	if len(got) != 1 || fmt.Sprint(got[0].Tags) != "[x]" {
		t.Fatalf("restored instances = %+v", got)
	}
}
