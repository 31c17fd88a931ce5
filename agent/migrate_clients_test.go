package agent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

var _ rpcapi.Conn = (*server.Server)(nil)

// TestStickyMigrateBetweenTwoClients runs one in-process server and two
// clients, each with its agent's snapshot endpoint on its own HTTP
// address. A sticky, migrating job placed on node-a is moved to node-b by
// a constraint change: node-b's replacement waits (through the servers)
// for node-a's alloc to stop, fetches its data from node-a's endpoint and
// finds the file it wrote.
func TestStickyMigrateBetweenTwoClients(t *testing.T) {
	srv, err := server.NewServer(context.Background(), &server.Config{NodeName: "s1.global"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)

	clients := map[string]*client.Client{}
	for _, name := range []string{"node-a", "node-b"} {
		// Each node's agent serves the HTTP API (the snapshot endpoint)
		// of its client.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl, err := client.New(&client.Config{
			RPC:      srv,
			Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
			AllocDir: t.TempDir(),
			NodeName: name,
			HTTPAddr: ln.Addr().String(),
			DevMode:  true,
		})
		if err != nil {
			_ = ln.Close()
			t.Fatal(err)
		}
		hs := httpapi.New(ln, &httpapi.Config{RPC: srv, Agent: agentInfo{&Agent{cfg: DefaultConfig()}}, Client: cl})
		hs.Serve()
		if err := cl.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cl.Shutdown()
			_ = hs.Shutdown(context.Background())
		})
		clients[name] = cl
	}
	ctx := context.Background()
	waitIndex(t, "two ready nodes", func(index uint64) (uint64, bool) {
		resp, err := srv.NodeList(ctx, &structs.NodeListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: 30 * time.Second}})
		if err != nil {
			t.Fatalf("NodeList: %v", err)
		}
		ready := 0
		for _, n := range resp.Nodes {
			if n.Status == structs.NodeStatusReady {
				ready++
			}
		}
		return resp.Index, ready == 2
	})

	job := func(node string) *structs.Job {
		return &structs.Job{
			ID: "sticky", Name: "sticky", Type: structs.JobTypeService, Datacenters: []string{"dc1"},
			TaskGroups: []*structs.TaskGroup{{
				Name: "g", Count: 1,
				EphemeralDisk: &structs.EphemeralDisk{Sticky: true, Migrate: true, SizeMB: 10},
				Constraints:   []*structs.Constraint{{LTarget: "${node.unique.name}", RTarget: node, Operand: "="}},
				Tasks: []*structs.Task{{Name: "t", Driver: mock.Name, Config: map[string]any{"kill_after": "10ms"},
					Resources: &structs.Resources{CPU: 20, MemoryMB: 16}}},
			}},
		}
	}
	running := func(nodeID string) *structs.Allocation {
		var found *structs.Allocation
		waitIndex(t, "an alloc running on "+nodeID, func(index uint64) (uint64, bool) {
			resp, err := srv.JobAllocations(ctx, &structs.JobSpecificRequest{JobID: "sticky",
				QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: 30 * time.Second}})
			if err != nil {
				t.Fatalf("JobAllocations: %v", err)
			}
			for _, a := range resp.Allocations {
				if a.NodeID == nodeID && a.ClientStatus == structs.AllocClientStatusRunning {
					full, err := srv.AllocGet(ctx, &structs.AllocSpecificRequest{AllocID: a.ID})
					if err == nil && full.Alloc != nil {
						found = full.Alloc
						return resp.Index, true
					}
				}
			}
			return resp.Index, false
		})
		return found
	}

	if _, err := srv.JobRegister(ctx, &structs.JobRegisterRequest{Job: job("node-a")}); err != nil {
		t.Fatal(err)
	}
	first := running(clients["node-a"].NodeID())
	dirA, err := clients["node-a"].AllocDir(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirA, "alloc", "data", "marker"), []byte(first.ID), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := srv.JobRegister(ctx, &structs.JobRegisterRequest{Job: job("node-b")}); err != nil {
		t.Fatal(err)
	}
	second := running(clients["node-b"].NodeID())
	if second.PreviousAllocation != first.ID {
		t.Errorf("PreviousAllocation = %q, want %q", second.PreviousAllocation, first.ID)
	}
	dirB, err := clients["node-b"].AllocDir(second.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dirB, "alloc", "data", "marker"))
	if err != nil || string(got) != first.ID {
		t.Errorf("marker on node-b = %q, %v; want %s", got, err, first.ID)
	}
	stA, err := clients["node-a"].AllocState(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	stB, err := clients["node-b"].AllocState(second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if started, ended := stB.TaskStates["t"].StartedAt, stA.TaskStates["t"].FinishedAt; ended.IsZero() || started.Before(ended) {
		t.Errorf("node-b's task started at %v, node-a's finished at %v", started, ended)
	}
}
