package taskrunner

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// endsWith reports whether the task's event types end with want.
func endsWith(st *structs.TaskState, want ...string) bool {
	got := eventTypes(st)
	return len(got) >= len(want) && slices.Equal(got[len(got)-len(want):], want)
}

// stopFromOutside makes the running task exit unsuccessfully, as if it
// crashed: the driver stops it behind the runner's back.
func stopFromOutside(t *testing.T, h *harness) {
	t.Helper()
	h.tr.mu.RLock()
	handle := h.tr.local.TaskHandle
	h.tr.mu.RUnlock()
	if handle == nil {
		t.Fatal("no task handle")
	}
	if err := h.driver.StopTask(context.Background(), handle.Config.ID, time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
}

func running(h *harness) func() bool {
	return func() bool { return h.tr.TaskState().State == structs.TaskStateRunning }
}

func TestTaskRunnerRestartHeld(t *testing.T) {
	ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested all tasks to restart")
	tests := []struct {
		name string
		// config of the task; policy nil means no restarts.
		config map[string]any
		policy *structs.RestartPolicy
		// ready is the state the restart is asked in, reached after runFor
		// (fake time) has passed.
		ready  func(h *harness) func() bool
		runFor time.Duration
		// then acts once the task is held, and checks the outcome.
		then func(t *testing.T, h *harness, release chan struct{})
	}{{
		name:   "running task stops, waits for release, starts again",
		config: map[string]any{},
		ready:  running,
		then: func(t *testing.T, h *harness, release chan struct{}) {
			st := h.tr.TaskState()
			if st.State != structs.TaskStatePending || !endsWith(st, "Restart Signaled", "Killing", "Terminated", "Restarting") {
				t.Fatalf("held: state %s events %q", st.State, eventTypes(st))
			}
			if r := findEvent(st, "Restarting").RestartReason; r != "User requested all tasks to restart" {
				t.Errorf("Restarting reason = %q", r)
			}
			if n := h.tr.Starts(); n != 1 {
				t.Errorf("Starts while held = %d, want 1", n)
			}
			close(release)
			settle(t, "started again", func() bool { return h.tr.Starts() == 2 && running(h)() })
			if st := h.tr.TaskState(); st.Failed || st.Restarts != 1 {
				t.Errorf("failed %v restarts %d", st.Failed, st.Restarts)
			}
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name:   "kill while held ends the run",
		config: map[string]any{},
		ready:  running,
		then: func(t *testing.T, h *harness, _ chan struct{}) {
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			st := h.tr.TaskState()
			if st.State != structs.TaskStateDead || !endsWith(st, "Terminated", "Restarting", "Killed") {
				t.Errorf("state %s events %q", st.State, eventTypes(st))
			}
		},
	}, {
		name:   "shutdown while held leaves the task pending",
		config: map[string]any{},
		ready:  running,
		then: func(t *testing.T, h *harness, _ chan struct{}) {
			h.tr.Shutdown()
			if st := h.tr.TaskState(); st.State != structs.TaskStatePending {
				t.Errorf("state after shutdown = %s", st.State)
			}
		},
	}, {
		name:   "task in a restart delay is held at once and skips the delay",
		config: map[string]any{"run_for": "1ms", "exit_code": 1},
		policy: &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Hour, Mode: structs.RestartPolicyModeFail},
		runFor: time.Millisecond,
		ready: func(h *harness) func() bool {
			return func() bool { return findEvent(h.tr.TaskState(), "Restarting") != nil }
		},
		then: func(t *testing.T, h *harness, release chan struct{}) {
			if st := h.tr.TaskState(); slices.Contains(eventTypes(st), "Killing") {
				t.Errorf("a task not running was killed: %q", eventTypes(st))
			}
			close(release)
			settle(t, "started again", func() bool { return h.tr.Starts() == 2 })
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: tc.config, RestartPolicy: tc.policy}), nil, nil)
				release := make(chan struct{})
				if _, err := h.tr.RestartHeld(ev, release); structs.KindOf(err) != structs.KindConflict {
					t.Errorf("RestartHeld before Run = %v, want a conflict", err)
				}
				go h.tr.Run()
				time.Sleep(tc.runFor)
				settle(t, "ready", tc.ready(h))
				stopped, err := h.tr.RestartHeld(ev, release)
				if err != nil {
					t.Fatal(err)
				}
				waitClosed(t, "stopped", stopped)
				tc.then(t, h, release)
				waitClosed(t, "run", h.tr.WaitCh())
			})
		})
	}
}

// A completed task is re-armed and runs again; a re-armed runner behaves
// like a new one (kill before Run, shutdown).
func TestTaskRunnerRearm(t *testing.T) {
	ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested all tasks to restart")
	tests := []struct {
		name string
		// after Rearm: run, kill or shut down the runner, then check.
		after func(t *testing.T, h *harness)
	}{{
		name: "runs again to completion",
		after: func(t *testing.T, h *harness) {
			go h.tr.Run()
			waitClosed(t, "second run", h.tr.WaitCh())
			st := h.tr.TaskState()
			want := []string{"Restart Signaled", "Restarting", "Started", "Terminated", "Not Restarting"}
			if st.State != structs.TaskStateDead || st.Failed || !endsWith(st, want...) {
				t.Errorf("state %s failed %v events %q, want them to end with %q", st.State, st.Failed, eventTypes(st), want)
			}
			if st.FinishedAt.IsZero() || h.tr.Starts() != 2 {
				t.Errorf("finished at %v, starts %d", st.FinishedAt, h.tr.Starts())
			}
		},
	}, {
		name: "kill before Run converges to killed",
		after: func(t *testing.T, h *harness) {
			h.tr.RequestKill(nil)
			go h.tr.Run()
			waitClosed(t, "second run", h.tr.WaitCh())
			if st := h.tr.TaskState(); !endsWith(st, "Restarting", "Killed") || h.tr.Starts() != 1 {
				t.Errorf("events %q, starts %d", eventTypes(st), h.tr.Starts())
			}
		},
	}, {
		name: "shutdown makes it unable to run again",
		after: func(t *testing.T, h *harness) {
			h.tr.Shutdown() // Run not called: returns at once
			go h.tr.Run()
			waitClosed(t, "second run", h.tr.WaitCh())
			if err := h.tr.Rearm(ev); structs.KindOf(err) != structs.KindConflict {
				t.Errorf("Rearm after shutdown = %v, want a conflict", err)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				task := &structs.Task{Config: map[string]any{"run_for": "1ms"},
					Lifecycle: &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}}
				h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
				if err := h.tr.Rearm(ev); structs.KindOf(err) != structs.KindConflict {
					t.Errorf("Rearm before Run = %v, want a conflict", err)
				}
				first := h.tr.WaitCh()
				go h.tr.Run()
				waitClosed(t, "first run", first)
				if _, err := h.tr.RestartHeld(ev, nil); structs.KindOf(err) != structs.KindConflict {
					t.Errorf("RestartHeld of a dead task = %v, want a conflict", err)
				}
				if err := h.tr.Restart(context.Background(), ev); structs.KindOf(err) != structs.KindConflict {
					t.Errorf("Restart of a dead task = %v, want a conflict", err)
				}
				if err := h.tr.Rearm(ev); err != nil {
					t.Fatal(err)
				}
				st := h.tr.TaskState()
				if st.State != structs.TaskStatePending || !st.FinishedAt.IsZero() || st.Restarts != 1 {
					t.Errorf("after Rearm: state %s finished at %v restarts %d", st.State, st.FinishedAt, st.Restarts)
				}
				if isClosed(h.tr.WaitCh()) {
					t.Fatal("WaitCh of the new run is closed")
				}
				if err := h.tr.Rearm(ev); structs.KindOf(err) != structs.KindConflict {
					t.Errorf("second Rearm = %v, want a conflict", err)
				}
				tc.after(t, h)
			})
		})
	}
}

// Operator restarts count no attempt against the restart policy: after
// two of them, a policy of one attempt still restarts a crash once.
func TestTaskRunnerUserRestartsConsumeNoAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}, RestartPolicy: policy}), nil, nil)
		go h.tr.Run()
		settle(t, "running", running(h))
		if err := h.tr.Restart(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		settle(t, "restarted", func() bool { return h.tr.Starts() == 2 && running(h)() })
		release := make(chan struct{})
		close(release)
		stopped, err := h.tr.RestartHeld(nil, release)
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, "stopped", stopped)
		settle(t, "restarted again", func() bool { return h.tr.Starts() == 3 && running(h)() })

		stopFromOutside(t, h)
		settle(t, "restarted after a crash", func() bool { return h.tr.Starts() == 4 && running(h)() })
		if ev := h.tr.TaskState().Events; !slices.ContainsFunc(ev, func(e *structs.TaskEvent) bool {
			return e.Type == structs.TaskRestarting && e.RestartReason == ReasonWithinPolicy
		}) {
			t.Errorf("no Restarting within policy in %q", eventTypes(h.tr.TaskState()))
		}
		stopFromOutside(t, h)
		waitClosed(t, "run", h.tr.WaitCh())
		if st := h.tr.TaskState(); !st.Failed || !endsWith(st, "Terminated", "Not Restarting") {
			t.Errorf("second crash: failed %v events %q", st.Failed, eventTypes(st))
		}
	})
}
