package allocrunner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

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
	waitChange(t, ar, "tasks running", func() bool {
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
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// Poststart tasks start once the main tasks are running.
func TestAllocRunnerPoststartAfterMainStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
	})
}

// A stop before the main tasks started still never starts a poststart task.
func TestAllocRunnerStopBeforePoststart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mockTask("main", map[string]any{"start_block_for": "10s"})
		poststart := withLifecycle(mockTask("announce", map[string]any{}), structs.TaskLifecycleHookPoststart, false)
		alloc := testAlloc(structs.JobTypeService, main, poststart)
		h := newHarness(t, alloc)
		go h.ar.Run()
		waitChange(t, h.ar, "main task setup", func() bool {
			return len(h.ar.AllocState().TaskStates["main"].Events) >= 2
		})
		h.ar.Update(stopUpdate(alloc))
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if got := types(st.TaskStates["announce"]); len(got) != 2 || got[1] != structs.TaskKilled {
			t.Errorf("poststart events = %q, want Received, Killed", got)
		}
		h.ar.Destroy()
	})
}

// Operator actions: restart one task or all running tasks, signal one or
// all running tasks; unknown tasks are NotFound, tasks not running a
// Conflict.
func TestAllocRunnerOperatorActions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pre := withLifecycle(mockTask("init", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPrestart, false)
		alloc := testAlloc(structs.JobTypeService, pre, mockTask("a", map[string]any{}), mockTask("b", map[string]any{}))
		h := newHarness(t, alloc)
		ctx := context.Background()
		if err := h.ar.RestartTask(ctx, "a", nil); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("RestartTask before Run = %v, want a conflict", err)
		}
		go h.ar.Run()
		allRunning(t, h.ar, "a", "b")
		if err := h.ar.RestartTask(ctx, "nope", nil); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("RestartTask(unknown) = %v", err)
		}
		if err := h.ar.RestartTask(ctx, "init", nil); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("RestartTask(dead task) = %v, want a conflict", err)
		}
		if err := h.ar.RestartTask(ctx, "a", nil); err != nil {
			t.Fatal(err)
		}
		waitChange(t, h.ar, "a restarted", func() bool {
			ts := h.ar.AllocState().TaskStates["a"]
			return ts.Restarts == 1 && ts.State == structs.TaskStateRunning
		})
		ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested restart")
		if err := h.ar.RestartAll(ctx, ev); err != nil {
			t.Fatal(err)
		}
		waitChange(t, h.ar, "all restarted", func() bool {
			st := h.ar.AllocState()
			return st.TaskStates["a"].Restarts == 2 && st.TaskStates["b"].Restarts == 1 &&
				st.TaskStates["a"].State == structs.TaskStateRunning && st.TaskStates["b"].State == structs.TaskStateRunning
		})
		if st := h.ar.AllocState().TaskStates["init"]; st.Restarts != 0 {
			t.Errorf("RestartAll restarted a dead prestart task")
		}
		for _, name := range []string{"a", "b"} {
			got := types(h.ar.AllocState().TaskStates[name])
			want := []string{"Restart Signaled", "Killing", "Terminated", "Restarting", "Started"}
			if len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
				t.Errorf("%s events = %q, want them to end with %q", name, got, want)
			}
		}

		if err := h.ar.SignalTask(ctx, "a", "SIGUSR1"); err != nil {
			t.Fatal(err)
		}
		if err := h.ar.SignalTask(ctx, "", "SIGHUP"); err != nil {
			t.Fatal(err)
		}
		if err := h.ar.SignalTask(ctx, "init", "SIGHUP"); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("SignalTask(dead task) = %v, want a conflict", err)
		}
		for name, want := range map[string][]string{"a": {"SIGUSR1", "SIGHUP"}, "b": {"SIGHUP"}} {
			if got := h.driver.ReceivedSignals(taskID(t, h, name)); !slices.Equal(got, want) {
				t.Errorf("%s received %q, want %q", name, got, want)
			}
		}
		h.ar.Destroy()
	})
}

// taskID returns the driver's ID of a running task.
func taskID(t *testing.T, h *harness, task string) string {
	t.Helper()
	ls, _, err := h.db.GetTaskRunnerState(h.ar.ID(), task)
	if err != nil || ls == nil || ls.TaskHandle == nil {
		t.Fatalf("no task handle for %s: %v", task, err)
	}
	return ls.TaskHandle.Config.ID
}

// When the main tasks finish on their own, sidecars are killed after them
// (Main Tasks Dead) and poststop tasks start after every other task is dead.
func TestAllocRunnerLifecycleOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pre := withLifecycle(mockTask("init", map[string]any{"run_for": "5ms"}), structs.TaskLifecycleHookPrestart, false)
		side := withLifecycle(mockTask("sidecar", map[string]any{"kill_after": "10ms"}), structs.TaskLifecycleHookPrestart, true)
		postSide := withLifecycle(mockTask("poststart-sidecar", map[string]any{}), structs.TaskLifecycleHookPoststart, true)
		post := withLifecycle(mockTask("cleanup", map[string]any{"run_for": "5ms"}), structs.TaskLifecycleHookPoststop, false)
		main1 := mockTask("main1", map[string]any{"run_for": "20ms"})
		main2 := mockTask("main2", map[string]any{"run_for": "30ms"})
		h := newHarness(t, testAlloc(structs.JobTypeBatch, post, main1, postSide, side, main2, pre))
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		ts := func(task, typ string) int64 { return eventTime(t, st.TaskStates[task], typ) }

		initDone := ts("init", structs.TaskTerminated)
		for _, m := range []string{"main1", "main2"} {
			if ts(m, structs.TaskStarted) < initDone {
				t.Errorf("%s started before the prestart task finished", m)
			}
			if ts(m, structs.TaskStarted) < ts("sidecar", structs.TaskStarted) {
				t.Errorf("%s started before the prestart sidecar", m)
			}
			if ts("poststart-sidecar", structs.TaskStarted) < ts(m, structs.TaskStarted) {
				t.Errorf("poststart task started before %s", m)
			}
		}
		mainsDead := max(ts("main1", structs.TaskNotRestarting), ts("main2", structs.TaskNotRestarting))
		for _, s := range []string{"sidecar", "poststart-sidecar"} {
			if ts(s, structs.TaskMainDead) < mainsDead || ts(s, structs.TaskKilling) < mainsDead {
				t.Errorf("%s killed before the main tasks were dead", s)
			}
			if ts("cleanup", structs.TaskStarted) < ts(s, structs.TaskKilled) {
				t.Errorf("poststop task started before %s was dead", s)
			}
		}
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
		}
		h.ar.Destroy()
	})
}

// Signalling every task goes on past a task whose driver fails and
// returns that failure.
func TestAllocRunnerSignalAllContinuesPastErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService,
			mockTask("bad", map[string]any{"signal_error": "refused"}), mockTask("good", map[string]any{}))
		h := newHarness(t, alloc)
		go h.ar.Run()
		allRunning(t, h.ar, "bad", "good")
		err := h.ar.SignalTask(context.Background(), "", "SIGHUP")
		if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), `"bad"`) {
			t.Errorf("SignalTask(all) = %v, want the bad task's error", err)
		}
		if got := h.driver.ReceivedSignals(taskID(t, h, "good")); !slices.Equal(got, []string{"SIGHUP"}) {
			t.Errorf("good received %q", got)
		}
		h.ar.Destroy()
	})
}

// Run, Update, Destroy and Shutdown may race in any order: every runner
// ends, nothing deadlocks, no goroutine is left (goleak in TestMain).
func TestAllocRunnerRacingRunDestroyShutdown(t *testing.T) {
	for i := range 12 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pre := withLifecycle(mockTask("init", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPrestart, false)
				side := withLifecycle(mockTask("sidecar", map[string]any{}), structs.TaskLifecycleHookPrestart, true)
				alloc := testAlloc(structs.JobTypeService, pre, side, mockTask("web", map[string]any{}))
				h := newHarness(t, alloc)
				var wg sync.WaitGroup
				run := func(f func()) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f()
					}()
				}
				run(h.ar.Run)
				if i%3 == 0 {
					run(func() { h.ar.Update(stopUpdate(alloc)) })
				}
				if i%2 == 0 {
					run(h.ar.Shutdown)
				}
				run(h.ar.Destroy)
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				waitClosed(t, "run, destroy and shutdown", done)
				waitClosed(t, "wait ch", h.ar.WaitCh())
				if !h.ar.IsDestroyed() {
					t.Errorf("not destroyed")
				}
				h.driver.Shutdown() // tasks a shutdown left running
			})
		})
	}
}
