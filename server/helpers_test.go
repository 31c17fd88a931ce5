package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) {
	// serf's Snapshotter.Wait (called by Serf.Shutdown) waits for its
	// stream goroutine but not for teeStream, which returns on its own
	// soon after; on a loaded machine it may still be there when the
	// check runs.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/hashicorp/serf/serf.(*Snapshotter).teeStream"))
}

// newTestServer starts a server and shuts it down at the end of the test.
func newTestServer(t *testing.T, mutate func(*Config)) *Server {
	t.Helper()
	cfg := &Config{NodeName: "test-" + t.Name()}
	if mutate != nil {
		mutate(cfg)
	}
	s, err := NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

// waitFor polls cond until it returns true or the deadline passes.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for an event
	}
	t.Fatalf("timed out waiting for %s: %s", what, last)
}

func testNode(id string, cpu, mem int64) *structs.Node {
	return &structs.Node{
		ID: id, SecretID: "secret-" + id, Name: id, Datacenter: "dc1",
		Status:     structs.NodeStatusReady,
		Attributes: map[string]string{"kernel.name": "linux"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: cpu},
			Memory: structs.NodeMemoryResources{MemoryMB: mem},
		},
		Drivers: map[string]*structs.DriverInfo{"mock": {Detected: true, Healthy: true}},
	}
}

func registerNode(t *testing.T, s *Server, n *structs.Node) *structs.NodeUpdateResponse {
	t.Helper()
	resp, err := s.NodeRegister(context.Background(), &structs.NodeRegisterRequest{Node: n})
	if err != nil {
		t.Fatalf("NodeRegister: %v", err)
	}
	return resp
}

func testJob(id string, count, cpu, mem int) *structs.Job {
	return &structs.Job{
		ID: id, Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "web", Count: count,
			Tasks: []*structs.Task{{
				Name: "app", Driver: "mock",
				Config:    map[string]any{"run_for": "10s", "args": []string{"a", "b"}, "n": 3},
				Resources: &structs.Resources{CPU: cpu, MemoryMB: mem},
			}},
		}},
	}
}

func registerJob(t *testing.T, s *Server, job *structs.Job) *structs.JobRegisterResponse {
	t.Helper()
	resp, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: job})
	if err != nil {
		t.Fatalf("JobRegister: %v", err)
	}
	return resp
}

// allocsOf returns a job's allocations with the given desired status.
func allocsOf(t *testing.T, s *Server, jobID, desired string) []*structs.Allocation {
	t.Helper()
	all, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		t.Fatal(err)
	}
	var out []*structs.Allocation
	for _, a := range all {
		if desired == "" || a.DesiredStatus == desired {
			out = append(out, a)
		}
	}
	return out
}

func waitEvalStatus(t *testing.T, s *Server, evalID, status string) *structs.Evaluation {
	t.Helper()
	var e *structs.Evaluation
	waitFor(t, "eval "+evalID+" "+status, func() (bool, string) {
		var err error
		e, err = s.State().EvalByID(nil, evalID)
		if err != nil || e == nil {
			return false, fmt.Sprintf("eval: %v %v", e, err)
		}
		return e.Status == status, "status " + e.Status
	})
	return e
}
