package allocrunner

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// eventTime returns the time of the last event of type typ, failing the
// test when there is none.
func eventTime(t *testing.T, st *structs.TaskState, typ string) int64 {
	t.Helper()
	for i := len(st.Events) - 1; i >= 0; i-- {
		if st.Events[i].Type == typ {
			return st.Events[i].Time
		}
	}
	t.Fatalf("no %q event in %q", typ, types(st))
	return 0
}

func withLifecycle(task *structs.Task, hook string, sidecar bool) *structs.Task {
	task.Lifecycle = &structs.TaskLifecycle{Hook: hook, Sidecar: sidecar}
	return task
}

// allRunning polls until every named task is running.
func allRunning(t *testing.T, ar *AllocRunner, names ...string) {
	t.Helper()
	waitFor(t, "tasks running", func() bool {
		st := ar.AllocState()
		for _, n := range names {
			if st.TaskStates[n].State != structs.TaskStateRunning {
				return false
			}
		}
		return true
	})
}

// stopUpdate returns a newer version of alloc that the server stopped.
func stopUpdate(alloc *structs.Allocation) *structs.Allocation {
	stop := alloc.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	stop.AllocModifyIndex = alloc.AllocModifyIndex + 1
	return stop
}

// On a stop, sidecars are killed only after the main tasks are dead, and
// poststop tasks run after that.
func TestAllocRunnerStopKillsSidecarsAfterMainTasks(t *testing.T) {
	// The main task takes 50ms to exit after its signal: a sidecar killed
	// in parallel would record Killing before the main task's Killed.
	main := mockTask("main", map[string]any{"kill_after": "50ms"})
	side := withLifecycle(mockTask("sidecar", map[string]any{}), structs.TaskLifecycleHookPrestart, true)
	postSide := withLifecycle(mockTask("poststart-sidecar", map[string]any{}), structs.TaskLifecycleHookPoststart, true)
	post := withLifecycle(mockTask("cleanup", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPoststop, false)
	alloc := testAlloc(structs.JobTypeService, side, main, postSide, post)
	h := newHarness(t, alloc)
	go h.ar.Run()
	allRunning(t, h.ar, "main", "sidecar", "poststart-sidecar")
	h.ar.Update(stopUpdate(alloc))
	waitClosed(t, "run", h.ar.WaitCh())
	st := h.ar.AllocState()

	mainKilled := eventTime(t, st.TaskStates["main"], structs.TaskKilled)
	for _, name := range []string{"sidecar", "poststart-sidecar"} {
		if got := eventTime(t, st.TaskStates[name], structs.TaskKilling); got < mainKilled {
			t.Errorf("%s: Killing at %d, before the main task was dead (%d)", name, got, mainKilled)
		}
	}
	cleanupStarted := eventTime(t, st.TaskStates["cleanup"], structs.TaskStarted)
	for _, name := range []string{"main", "sidecar", "poststart-sidecar"} {
		if killed := eventTime(t, st.TaskStates[name], structs.TaskKilled); cleanupStarted < killed {
			t.Errorf("poststop task started at %d, before %s was dead (%d)", cleanupStarted, name, killed)
		}
	}
	if st.ClientStatus != structs.AllocClientStatusComplete {
		t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
	}
	h.ar.Destroy()
}

// Poststart tasks start once the main tasks are running.
func TestAllocRunnerPoststartAfterMainStarted(t *testing.T) {
	// StartTask of the main task blocks 50ms: a poststart task started in
	// parallel would record Started first.
	main := mockTask("main", map[string]any{"start_block_for": "50ms", "run_for": "20ms"})
	poststart := withLifecycle(mockTask("announce", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPoststart, false)
	h := newHarness(t, testAlloc(structs.JobTypeBatch, poststart, main))
	go h.ar.Run()
	waitClosed(t, "run", h.ar.WaitCh())
	st := h.ar.AllocState()
	mainStarted := eventTime(t, st.TaskStates["main"], structs.TaskStarted)
	if got := eventTime(t, st.TaskStates["announce"], structs.TaskStarted); got < mainStarted {
		t.Errorf("poststart task started at %d, before the main task (%d)", got, mainStarted)
	}
	if st.ClientStatus != structs.AllocClientStatusComplete {
		t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
	}
	h.ar.Destroy()
}

// A stop before the main tasks started still never starts a poststart task.
func TestAllocRunnerStopBeforePoststart(t *testing.T) {
	main := mockTask("main", map[string]any{"start_block_for": "10s"})
	poststart := withLifecycle(mockTask("announce", map[string]any{}), structs.TaskLifecycleHookPoststart, false)
	alloc := testAlloc(structs.JobTypeService, main, poststart)
	h := newHarness(t, alloc)
	go h.ar.Run()
	waitFor(t, "main task setup", func() bool {
		return len(h.ar.AllocState().TaskStates["main"].Events) >= 2
	})
	h.ar.Update(stopUpdate(alloc))
	waitClosed(t, "run", h.ar.WaitCh())
	st := h.ar.AllocState()
	if got := types(st.TaskStates["announce"]); len(got) != 2 || got[1] != structs.TaskKilled {
		t.Errorf("poststart events = %q, want Received, Killed", got)
	}
	h.ar.Destroy()
}
