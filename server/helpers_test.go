package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"
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

// waitState waits for cond to hold of the server's state, re-checking it
// each time the state it read changes: cond reads the state store with ws,
// which collects what it read, and a write to any of it wakes the wait. A
// snapshot restore (the store replaced) wakes it too. It works in and out
// of a synctest bubble; its minute is a bound for a hung test (in a bubble
// a minute of the bubble's time), never a timing the test relies on.
func waitState(t *testing.T, s *Server, what string, cond func(ws memdb.WatchSet) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		st := s.State()
		ws.Add(st.AbandonCh())
		ok, msg := cond(ws)
		if ok {
			return
		}
		if err := ws.WatchCtx(ctx); err != nil {
			t.Fatalf("%s: not so after a minute: %s", what, msg)
		}
	}
}

// settled requires cond once every goroutine of the test's synctest
// bubble is blocked: the code under test has done all it can at the
// bubble's present time. Only in a bubble.
func settled(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	synctest.Wait()
	if ok, msg := cond(); !ok {
		t.Fatalf("%s: not so once the server is idle: %s", what, msg)
	}
}

// waitFor polls cond until it returns true or the deadline passes. Prefer
// waitState (state the server writes) or, in a synctest bubble, settled:
// waitFor is for a condition with neither.
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
	return allocsOfWatch(t, s, nil, jobID, desired)
}

// allocsOfWatch is allocsOf adding what it read to ws (for waitState).
func allocsOfWatch(t *testing.T, s *Server, ws memdb.WatchSet, jobID, desired string) []*structs.Allocation {
	t.Helper()
	all, err := s.State().AllocsByJob(ws, structs.DefaultNamespace, jobID)
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
	waitState(t, s, "eval "+evalID+" "+status, func(ws memdb.WatchSet) (bool, string) {
		var err error
		e, err = s.State().EvalByID(ws, evalID)
		if err != nil || e == nil {
			return false, fmt.Sprintf("eval: %v %v", e, err)
		}
		return e.Status == status, "status " + e.Status
	})
	return e
}
