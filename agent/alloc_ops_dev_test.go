package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestDevAgentAllocOps drives restart, signal (with a driver that refuses
// signals), stop and GC through a dev agent's HTTP API.
func TestDevAgentAllocOps(t *testing.T) {
	ta := startDevAgent(t)
	body := `{"Job": {"ID": "ops", "Type": "service",
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver",
		"Config": {"signal_error": "mock refuses signals", "stdout_string": "hello from t\n", "run_for": "1h"},
		"Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`
	ta.must("PUT", "/v1/jobs", body, nil)
	var allocs []*structs.AllocListStub
	ta.watch("the alloc to run", "/v1/job/ops/allocations", &allocs, func() bool {
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	id := allocs[0].ID

	// waitEvent waits, on the allocation's blocking query, until its task
	// recorded an event of type typ.
	waitEvent := func(typ string) {
		t.Helper()
		var a structs.Allocation
		ta.watch("the "+typ+" event", "/v1/allocation/"+id, &a, func() bool {
			ts := a.TaskStates["t"]
			return ts != nil && slices.ContainsFunc(ts.Events, func(e *structs.TaskEvent) bool { return e.Type == typ })
		})
	}

	// A driver's signal error is a 500 with its message, and the task
	// records the Signaling event.
	code, _, msg := ta.do("PUT", "/v1/client/allocation/"+id[:8]+"/signal", `{"Signal": "SIGHUP", "Task": "t"}`)
	if code != 500 || !strings.Contains(string(msg), "mock refuses signals") {
		t.Errorf("signal = %d %s, want 500 with the driver's message", code, msg)
	}
	waitEvent(structs.TaskSignaling)

	ta.must("PUT", "/v1/client/allocation/"+id+"/restart", `{"TaskName": "t"}`, nil)
	waitEvent(structs.TaskRestartSignal)

	if code, _, msg := ta.do("PUT", "/v1/client/allocation/nope/restart", ""); code != 404 {
		t.Errorf("restart of an unknown alloc = %d %s", code, msg)
	}

	// The mock task's stdout, through the logs endpoint.
	ta.follow("the task's stdout", "/v1/client/fs/logs/"+id+"?task=t&type=stdout&plain=true&follow=true", "hello from t")

	// Nothing terminal yet: GC leaves the running alloc alone.
	var gc struct{ Collected []string }
	ta.must("PUT", "/v1/system/gc", "", &gc)
	if len(gc.Collected) != 0 {
		t.Fatalf("gc of a running alloc: %v", gc.Collected)
	}

	var stop struct {
		EvalID string
		Index  uint64
	}
	ta.must("PUT", "/v1/allocation/"+id[:8]+"/stop", "", &stop)
	if stop.EvalID == "" {
		t.Fatalf("stop = %+v", stop)
	}
	ta.watch("a replacement and the stopped alloc complete", "/v1/job/ops/allocations", &allocs, func() bool {
		var done, running bool
		for _, a := range allocs {
			done = done || (a.ID == id && a.ClientStatus == structs.AllocClientStatusComplete)
			running = running || (a.ID != id && a.ClientStatus == structs.AllocClientStatusRunning)
		}
		return done && running
	})
	ta.must("PUT", "/v1/client/gc", "", &gc)
	if len(gc.Collected) != 1 || gc.Collected[0] != id {
		t.Fatalf("gc collected %v, want [%s]", gc.Collected, id)
	}
	if code, _, msg := ta.do("GET", "/v1/client/fs/ls/"+id, ""); code != 404 || !strings.Contains(string(msg), "garbage collected") {
		t.Errorf("ls of a collected alloc = %d %s", code, msg)
	}
}
