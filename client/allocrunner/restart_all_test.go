package allocrunner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/structs"
)

// countEvents returns how many events of type typ the task has.
func countEvents(st *structs.TaskState, typ string) int {
	n := 0
	for _, e := range st.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// lastEvent returns the task's last event of type typ, or nil.
func lastOf(st *structs.TaskState, typ string) *structs.TaskEvent {
	for i := len(st.Events) - 1; i >= 0; i-- {
		if st.Events[i].Type == typ {
			return st.Events[i]
		}
	}
	return nil
}

// lifecycleAlloc is a service alloc with every kind of task: an ephemeral
// prestart task, a prestart sidecar, the main task, an ephemeral poststart
// task and a poststop task. No task may restart under its policy, so a
// restart counted against it would fail the task.
func lifecycleAlloc() *structs.Allocation {
	return testAlloc(structs.JobTypeService,
		withLifecycle(mockTask("init", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPrestart, false),
		withLifecycle(mockTask("proxy", map[string]any{}), structs.TaskLifecycleHookPrestart, true),
		mockTask("web", map[string]any{}),
		withLifecycle(mockTask("announce", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPoststart, false),
		withLifecycle(mockTask("cleanup", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPoststop, false),
	)
}

// started waits until the lifecycle alloc's tasks have all started once
// and the ephemeral ones completed.
func started(t *testing.T, ar *AllocRunner) {
	t.Helper()
	allRunning(t, ar, "proxy", "web")
	waitChange(t, ar, "announce completed", func() bool {
		return ar.AllocState().TaskStates["announce"].State == structs.TaskStateDead
	})
}

func TestAllocRunnerRestartModes(t *testing.T) {
	const allReason = "User requested all tasks to restart"
	tests := []struct {
		name    string
		restart func(ar *AllocRunner) error
		// restarted are the tasks restarted (running ones) or run again
		// (completed ones); the others must be untouched.
		restarted []string
		reason    string
		// lifecycle: the completed tasks run again in lifecycle order.
		lifecycle bool
	}{{
		name:      "all tasks reruns the lifecycle",
		restart:   func(ar *AllocRunner) error { return ar.RestartAllTasks(context.Background(), nil) },
		restarted: []string{"init", "proxy", "web", "announce"},
		reason:    allReason,
		lifecycle: true,
	}, {
		name: "running tasks only",
		restart: func(ar *AllocRunner) error {
			return ar.RestartAll(context.Background(), structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested restart"))
		},
		restarted: []string{"proxy", "web"},
		reason:    "User requested restart",
	}, {
		name:      "one task",
		restart:   func(ar *AllocRunner) error { return ar.RestartTask(context.Background(), "web", nil) },
		restarted: []string{"web"},
		reason:    "User requested restart",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, lifecycleAlloc())
				go h.ar.Run()
				started(t, h.ar)
				if err := tc.restart(h.ar); err != nil {
					t.Fatal(err)
				}
				waitChange(t, h.ar, "restarted tasks started again", func() bool {
					st := h.ar.AllocState()
					for _, name := range tc.restarted {
						if countEvents(st.TaskStates[name], structs.TaskStarted) != 2 {
							return false
						}
					}
					return !tc.lifecycle || st.TaskStates["announce"].State == structs.TaskStateDead
				})
				st := h.ar.AllocState()
				if st.ClientStatus != structs.AllocClientStatusRunning {
					t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
				}
				for name, ts := range st.TaskStates {
					want := 1
					if slices.Contains(tc.restarted, name) {
						want = 2
						sig := lastOf(ts, structs.TaskRestartSignal)
						if sig == nil || sig.RestartReason != tc.reason {
							t.Errorf("%s: Restart Signaled = %+v, want reason %q", name, sig, tc.reason)
						}
					} else if countEvents(ts, structs.TaskRestartSignal) != 0 {
						t.Errorf("%s was restarted: %q", name, types(ts))
					}
					if name == "cleanup" {
						want = 0 // poststop: not run by a restart
					}
					if got := countEvents(ts, structs.TaskStarted); got != want {
						t.Errorf("%s started %d times, want %d: %q", name, got, want, types(ts))
					}
					// The policy allows no restart: one counted would end the
					// task with Not Restarting for another reason than success.
					for _, e := range ts.Events {
						if ts.Failed || (e.Type == structs.TaskNotRestarting && e.RestartReason != taskrunner.ReasonBatchSucceeded) {
							t.Errorf("%s: a restart counted against the policy: %q (%s)", name, types(ts), e.RestartReason)
							break
						}
					}
				}
				// Running tasks stop, then start again.
				for _, name := range []string{"proxy", "web"} {
					if !slices.Contains(tc.restarted, name) {
						continue
					}
					got, want := types(st.TaskStates[name]), []string{"Restart Signaled", "Killing", "Terminated", "Restarting", "Started"}
					if !slices.Equal(got[len(got)-len(want):], want) {
						t.Errorf("%s events = %q, want them to end with %q", name, got, want)
					}
				}
				if tc.lifecycle {
					checkLifecycleOrder(t, st)
				}
				h.ar.Destroy()
			})
		})
	}
}

// checkLifecycleOrder checks, on event times, that a restart of all tasks
// stopped the main task before running the prestart tasks again, ran the
// ephemeral prestart task to completion before starting the main task,
// and started the poststart task after it.
func checkLifecycleOrder(t *testing.T, st *State) {
	t.Helper()
	init, proxy, web, announce := st.TaskStates["init"], st.TaskStates["proxy"], st.TaskStates["web"], st.TaskStates["announce"]
	webStopped := lastOf(web, structs.TaskTerminated).Time
	webStarted := lastOf(web, structs.TaskStarted).Time
	initStarted := lastOf(init, structs.TaskStarted).Time
	initDone := lastOf(init, structs.TaskTerminated).Time
	if initStarted < webStopped {
		t.Errorf("init ran again at %d, before web stopped (%d)", initStarted, webStopped)
	}
	if initDone > webStarted {
		t.Errorf("web started at %d, before init completed again (%d)", webStarted, initDone)
	}
	if got := lastOf(proxy, structs.TaskStarted).Time; got > webStarted {
		t.Errorf("prestart sidecar started at %d, after web (%d)", got, webStarted)
	}
	if got := lastOf(announce, structs.TaskStarted).Time; got < webStarted {
		t.Errorf("poststart task started at %d, before web (%d)", got, webStarted)
	}
	want := []string{"Terminated", "Not Restarting", "Restart Signaled", "Restarting", "Started", "Terminated", "Not Restarting"}
	if got := types(init); !slices.Equal(got[len(got)-len(want):], want) {
		t.Errorf("init events = %q, want them to end with %q", got, want)
	}
}

// RestartAllTasks and RestartTask refuse what they cannot do.
func TestAllocRunnerRestartErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		alloc *structs.Allocation
		// setup brings the runner to the state the restart is asked in.
		setup   func(t *testing.T, h *harness)
		restart func(ar *AllocRunner) error
		want    string
	}{{
		name:    "all tasks before Run",
		alloc:   lifecycleAlloc(),
		setup:   func(*testing.T, *harness) {},
		restart: func(ar *AllocRunner) error { return ar.RestartAllTasks(ctx, nil) },
		want:    "is not running",
	}, {
		name:  "all tasks of a completed alloc",
		alloc: testAlloc(structs.JobTypeBatch, mockTask("web", map[string]any{"run_for": "1ms"})),
		setup: func(t *testing.T, h *harness) {
			go h.ar.Run()
			waitClosed(t, "run", h.ar.WaitCh())
		},
		restart: func(ar *AllocRunner) error { return ar.RestartAllTasks(ctx, nil) },
		want:    "is not running",
	}, {
		name:  "one completed task",
		alloc: lifecycleAlloc(),
		setup: func(t *testing.T, h *harness) {
			go h.ar.Run()
			started(t, h.ar)
		},
		restart: func(ar *AllocRunner) error { return ar.RestartTask(ctx, "init", nil) },
		want:    `task "init" is not running`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.alloc)
				tc.setup(t, h)
				err := tc.restart(h.ar)
				if structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want a conflict saying %q", err, tc.want)
				}
				h.ar.Destroy()
			})
		})
	}
}

// A stop, destroy or shutdown right after a restart of all tasks (tasks
// held, or running again) converges; nothing hangs or leaks.
func TestAllocRunnerEndDuringRestartAll(t *testing.T) {
	tests := []struct {
		name string
		end  func(h *harness, alloc *structs.Allocation)
		// killed: every task ends dead and the poststop task runs.
		killed bool
	}{
		{name: "stop", end: func(h *harness, alloc *structs.Allocation) { h.ar.Update(stopUpdate(alloc)) }, killed: true},
		{name: "destroy", end: func(h *harness, _ *structs.Allocation) { h.ar.Destroy() }},
		{name: "shutdown", end: func(h *harness, _ *structs.Allocation) { h.ar.Shutdown() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				alloc := lifecycleAlloc()
				h := newHarness(t, alloc)
				go h.ar.Run()
				started(t, h.ar)
				if err := h.ar.RestartAllTasks(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				tc.end(h, alloc)
				waitClosed(t, "run", h.ar.WaitCh())
				if !tc.killed {
					h.ar.Shutdown()
					return
				}
				st := h.ar.AllocState()
				for name, ts := range st.TaskStates {
					if ts.State != structs.TaskStateDead || ts.Failed {
						t.Errorf("%s: state %s failed %v: %q", name, ts.State, ts.Failed, types(ts))
					}
				}
				if got := types(st.TaskStates["web"]); got[len(got)-1] != structs.TaskKilled {
					t.Errorf("web events = %q, want Killed last", got)
				}
				if countEvents(st.TaskStates["cleanup"], structs.TaskStarted) != 1 {
					t.Errorf("poststop task did not run: %q", types(st.TaskStates["cleanup"]))
				}
				if st.ClientStatus != structs.AllocClientStatusComplete {
					t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
				}
				h.ar.Destroy()
			})
		})
	}
}

// A restart of all tasks asked while the alloc starts its tasks waits for
// them to have started (or for its context), then runs the lifecycle again.
func TestAllocRunnerRestartAllWhileStarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService,
			withLifecycle(mockTask("init", map[string]any{"run_for": "1ms"}), structs.TaskLifecycleHookPrestart, false),
			mockTask("web", map[string]any{"start_block_for": "100ms"}),
		)
		h := newHarness(t, alloc)
		go h.ar.Run()
		waitChange(t, h.ar, "init completed", func() bool {
			return h.ar.AllocState().TaskStates["init"].State == structs.TaskStateDead
		})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := h.ar.RestartAllTasks(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("RestartAllTasks(cancelled) = %v, want context.Canceled", err)
		}
		if err := h.ar.RestartAllTasks(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		waitChange(t, h.ar, "init and web started again", func() bool {
			st := h.ar.AllocState()
			return countEvents(st.TaskStates["init"], structs.TaskStarted) == 2 &&
				countEvents(st.TaskStates["web"], structs.TaskStarted) == 2
		})
		st := h.ar.AllocState()
		if init, web := lastOf(st.TaskStates["init"], structs.TaskTerminated).Time, lastOf(st.TaskStates["web"], structs.TaskStarted).Time; init > web {
			t.Errorf("web started at %d, before init completed again (%d)", web, init)
		}
		h.ar.Destroy()
	})
}
