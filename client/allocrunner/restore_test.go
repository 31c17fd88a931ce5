package allocrunner

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// TestAllocRunnerRestoreLostTask: after a restart of the agent, a task
// that ended while it was down (the driver no longer knows it) is handled
// by its restart policy; with no attempts it fails, its sibling is killed
// and the alloc fails.
func TestAllocRunnerRestoreLostTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("lost", map[string]any{}), mockTask("sibling", map[string]any{}))
		h := newHarness(t, alloc)
		go h.ar.Run()
		settle(t, "both tasks running", func() bool {
			st := h.ar.AllocState()
			for _, name := range []string{"lost", "sibling"} {
				if ts := st.TaskStates[name]; ts == nil || ts.State != structs.TaskStateRunning {
					return false
				}
			}
			return true
		})
		h.ar.Shutdown()
		ls, _, err := h.db.GetTaskRunnerState(alloc.ID, "lost")
		if err != nil || ls == nil || ls.TaskHandle == nil {
			t.Fatalf("no handle: %+v %v", ls, err)
		}
		// The task dies while no agent runs: the driver forgets it.
		if err := h.driver.DestroyTask(context.Background(), ls.TaskHandle.Config.ID, true); err != nil {
			t.Fatal(err)
		}

		ar2, err := New(&Config{Alloc: alloc, AllocDirRoot: h.root, StateDB: h.db, KillGrace: 200 * time.Millisecond,
			Drivers: func(string) (drivers.DriverPlugin, error) { return h.driver, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if err := ar2.Restore(); err != nil {
			t.Fatal(err)
		}
		go ar2.Run()
		// The alloc shows failed as soon as the lost task fails, while its
		// sibling is still being killed: wait for the runner to end.
		<-ar2.WaitCh()
		st := ar2.AllocState()
		if st.ClientStatus != structs.AllocClientStatusFailed {
			t.Errorf("client status %s, want failed", st.ClientStatus)
		}
		lost := st.TaskStates["lost"]
		want := []string{"Received", "Task Setup", "Started", "Driver", "Terminated", "Not Restarting"}
		if got := types(lost); !slices.Equal(got, want) || !lost.Failed {
			t.Errorf("lost task: failed %v events %q, want %q", lost.Failed, got, want)
		}
		checkKilledBy(t, st.TaskStates["sibling"], structs.TaskSiblingFailed)
		ar2.Destroy()
	})
}

// TestAllocRunnerRestorePublishesState: an agent killed after it recorded
// its tasks running but before it told the servers leaves them believing
// the alloc pending. The restored runner re-attaches without any task
// state change, and must still publish the alloc's state once, or the
// servers would see it pending forever.
func TestAllocRunnerRestorePublishesState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
		h := newHarness(t, alloc)
		go h.ar.Run()
		waitChange(t, h.ar, "the task running", isRunning(h.ar))
		h.ar.Shutdown()

		rec := &recorder{}
		ar2, err := New(&Config{Alloc: alloc, AllocDirRoot: h.root, StateDB: h.db, KillGrace: 200 * time.Millisecond,
			StateUpdater: rec, Drivers: func(string) (drivers.DriverPlugin, error) { return h.driver, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if err := ar2.Restore(); err != nil {
			t.Fatal(err)
		}
		go ar2.Run()
		defer ar2.Destroy()
		settle(t, "the restored alloc's state published", func() bool {
			a := rec.last()
			return a != nil && a.ClientStatus == structs.AllocClientStatusRunning
		})
		if ts := ar2.AllocState().TaskStates["web"]; len(types(ts)) != 3 {
			t.Errorf("events %q: the task changed state on re-attach", types(ts))
		}
	})
}

// TestAllocRunnerWaitStartedEndsOnShutdown: a shutdown that comes while
// the runner starts its tasks (an agent stopped right after it received
// an allocation) may find a task runner that has not begun to run: the
// shutdown does not wait for it, and once it runs it returns at once
// without any state change, so nothing wakes a wait for the tasks to
// start. That wait must end on the shutdown itself, or the agent's
// shutdown hangs (seen in the chaos test).
func TestAllocRunnerWaitStartedEndsOnShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
		h := newHarness(t, alloc)
		h.ar.Shutdown() // no task runner ever ran
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ar.waitStarted(h.ar.lifecyclePhases().main)
		}()
		waitClosed(t, "the wait for tasks to start to end on the shutdown", done)
	})
}
