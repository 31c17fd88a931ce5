package agent

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestTasksSurviveTheAgent stops a non-dev agent while a raw_exec task
// runs and starts a new one on the same data_dir: the task was not
// restarted (same start time, no restart) and the new agent still
// controls it (stopping the job ends it).
func TestTasksSurviveTheAgent(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	cfg := func() *Config {
		c := persistentConfig(dir, true, true)
		c.Plugins["raw_exec"] = &PluginConfig{Name: "raw_exec", Config: json.RawMessage(`{"enabled": true}`)}
		return c
	}
	ta := startAgent(t, cfg())
	body := fmt.Sprintf(`{"Job": {"ID": "survive", "Type": "service",
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "raw_exec",
		"Config": {"command": %q, "args": ["300"]}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, sleep)
	ta.must("PUT", "/v1/jobs", body, nil)

	running := func(ta *testAgent) *structs.Allocation {
		var allocs []*structs.AllocListStub
		ta.watch("the task to run", "/v1/job/survive/allocations", &allocs, func() bool {
			if len(allocs) != 1 || allocs[0].ClientStatus != structs.AllocClientStatusRunning {
				return false
			}
			ts := allocs[0].TaskStates["t"]
			return ts != nil && ts.State == structs.TaskStateRunning
		})
		var alloc structs.Allocation
		ta.must("GET", "/v1/allocation/"+allocs[0].ID, "", &alloc)
		return &alloc
	}
	before := running(ta)
	ta.stop()

	ta2 := startAgent(t, cfg())
	after := running(ta2)
	if after.ID != before.ID {
		t.Fatalf("alloc after restart = %s, want %s", after.ID, before.ID)
	}
	tb, ta2s := before.TaskStates["t"], after.TaskStates["t"]
	if !ta2s.StartedAt.Equal(tb.StartedAt) || ta2s.Restarts != 0 {
		t.Errorf("task restarted: started %s (was %s), restarts %d", ta2s.StartedAt, tb.StartedAt, ta2s.Restarts)
	}

	// The new agent controls the task: stopping the job ends it.
	ta2.must("DELETE", "/v1/job/survive", "", nil)
	var alloc structs.Allocation
	ta2.watch("the task to stop", "/v1/allocation/"+after.ID, &alloc, func() bool {
		return alloc.ClientStatus == structs.AllocClientStatusComplete || alloc.ClientStatus == structs.AllocClientStatusFailed
	})
}
