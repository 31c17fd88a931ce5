package taskrunner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// settle waits until every other goroutine of the test's bubble is
// durably blocked (synctest.Wait: the runner, its hooks and the mock
// driver have done all they can without time passing) and then requires
// cond. Only for a test in a synctest bubble; where the outcome needs time
// to pass, the test sleeps (fake time) for it first.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("the runner settled without %s", what)
	}
}

// hungBound bounds a wait on an event outside a synctest bubble: a test
// that is hung fails instead of blocking the package, and no test relies
// on the bound's length.
const hungBound = time.Minute

// waitState waits until cond holds for tr's state, re-checking it at each
// change of the state (the runner's stateChanged broadcast), for a test
// that cannot run in a synctest bubble.
func waitState(t *testing.T, tr *TaskRunner, what string, cond func(*structs.TaskState) bool) {
	t.Helper()
	bound := time.NewTimer(hungBound)
	defer bound.Stop()
	for {
		tr.mu.RLock()
		st, changed := tr.state, tr.stateChanged
		tr.mu.RUnlock()
		if cond(st) {
			return
		}
		select {
		case <-changed:
		case <-bound.C:
			t.Fatalf("no %s after %s; state %s, events %q", what, hungBound, st.State, eventTypes(st))
		}
	}
}

// isRunning is waitState's condition for a running task.
func isRunning(st *structs.TaskState) bool { return st.State == structs.TaskStateRunning }

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hungBound):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// testAlloc returns an alloc of a one-task job; a mock driver task
// without run_for runs until stopped (mock.UntilStopped).
func testAlloc(jobType string, task *structs.Task) *structs.Allocation {
	if task.Name == "" {
		task.Name = "web"
	}
	if task.Driver == "" {
		task.Driver = mock.Name
	}
	if task.Driver == mock.Name {
		task.Config = mock.UntilStopped(task.Config)
	}
	if task.RestartPolicy == nil {
		task.RestartPolicy = &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}
	}
	if task.KillTimeout == 0 {
		task.KillTimeout = time.Second
	}
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, Namespace: "default", Region: "global",
		TaskGroups: []*structs.TaskGroup{{Name: "group", Count: 1, Tasks: []*structs.Task{task}}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.group[0]", JobID: "job", Job: job,
		TaskGroup: "group", Namespace: "default", DesiredStatus: structs.AllocDesiredStatusRun}
}

// counter counts state notifications.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) TaskStateUpdated() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) count() int        { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

type harness struct {
	tr     *TaskRunner
	driver *mock.Driver
	db     *state.MemDB
	notes  *counter
	alloc  *structs.Allocation
	dir    *allocdir.AllocDir
}

func newHarness(t *testing.T, alloc *structs.Allocation, driver *mock.Driver, db *state.MemDB) *harness {
	t.Helper()
	if driver == nil {
		driver = mock.New(nil)
		t.Cleanup(driver.Shutdown)
	}
	if db == nil {
		db = state.NewMemDB()
	}
	dir := allocdir.New(t.TempDir(), alloc.ID)
	if err := dir.Build(); err != nil {
		t.Fatal(err)
	}
	notes := &counter{}
	tr, err := New(&Config{
		Alloc:        alloc,
		Task:         alloc.Job.TaskGroups[0].Tasks[0],
		AllocDir:     dir,
		Driver:       driver,
		StateDB:      db,
		StateUpdater: notes,
		Node:         &structs.Node{ID: "node1", Datacenter: "dc1"},
		KillGrace:    200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{tr: tr, driver: driver, db: db, notes: notes, alloc: alloc, dir: dir}
}

func eventTypes(st *structs.TaskState) []string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return out
}

func findEvent(st *structs.TaskState, typ string) *structs.TaskEvent {
	for _, e := range st.Events {
		if e.Type == typ {
			return e
		}
	}
	return nil
}

func TestTaskRunnerEventSequences(t *testing.T) {
	attempts1 := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 5 * time.Millisecond, Mode: structs.RestartPolicyModeFail}
	tests := []struct {
		name     string
		jobType  string
		config   map[string]any
		policy   *structs.RestartPolicy
		lc       *structs.TaskLifecycle
		kill     bool // kill once the task is running
		timeout  time.Duration
		want     []string
		failed   bool
		restarts uint64
		check    func(t *testing.T, st *structs.TaskState)
	}{
		{
			name: "batch exit 0", jobType: structs.JobTypeBatch,
			config: map[string]any{"run_for": "5ms"},
			want:   []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"},
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Not Restarting"); e.DisplayMessage != ReasonBatchSucceeded || e.FailsTask {
					t.Errorf("Not Restarting = %q fails=%v", e.DisplayMessage, e.FailsTask)
				}
				if e := findEvent(st, "Task Setup"); e.DisplayMessage != "Building Task Directory" {
					t.Errorf("Task Setup = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Started"); e.DisplayMessage != "Task started by client" {
					t.Errorf("Started = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Terminated"); e.DisplayMessage != "Exit Code: 0" {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "exit 1 restarts then fails", jobType: structs.JobTypeService,
			config: map[string]any{"run_for": "5ms", "exit_code": 1}, policy: attempts1,
			want:   []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated", "Not Restarting"},
			failed: true, restarts: 1,
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Restarting"); e.StartDelay != int64(5*time.Millisecond) || e.RestartReason != ReasonWithinPolicy {
					t.Errorf("Restarting = %+v", e)
				}
				want := `Exceeded allowed attempts 1 in interval 1h0m0s and mode is "fail"`
				if e := findEvent(st, "Not Restarting"); e.DisplayMessage != want || !e.FailsTask {
					t.Errorf("Not Restarting = %q, want %q", e.DisplayMessage, want)
				}
				if e := findEvent(st, "Terminated"); e.DisplayMessage != "Exit Code: 1" {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "service prestart task exit 0 is done", jobType: structs.JobTypeService,
			config: map[string]any{"run_for": "5ms"}, policy: attempts1,
			lc:   &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart},
			want: []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"},
		},
		{
			name: "service poststart task exit 0 is done", jobType: structs.JobTypeService,
			config: map[string]any{"run_for": "5ms"}, policy: attempts1,
			lc:   &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststart},
			want: []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"},
		},
		{
			name: "service poststop task exit 0 is done", jobType: structs.JobTypeService,
			config: map[string]any{"run_for": "5ms"}, policy: attempts1,
			lc:   &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop},
			want: []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"},
		},
		{
			name: "service prestart sidecar exit 0 restarts", jobType: structs.JobTypeService,
			config: map[string]any{"run_for": "5ms"}, policy: attempts1,
			lc:       &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true},
			want:     []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated", "Not Restarting"},
			failed:   true,
			restarts: 1,
		},
		{
			name: "batch prestart task exit 1 restarts then fails", jobType: structs.JobTypeBatch,
			config: map[string]any{"run_for": "5ms", "exit_code": 1}, policy: attempts1,
			lc:       &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart},
			want:     []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated", "Not Restarting"},
			failed:   true,
			restarts: 1,
		},
		{
			name: "stop while running", jobType: structs.JobTypeService,
			config: map[string]any{}, kill: true,
			want: []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"},
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Killing"); e.DisplayMessage != "Sent interrupt. Waiting 1s before force killing" {
					t.Errorf("Killing = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Terminated"); e.DisplayMessage != "Exit Code: 130, Signal: 2" {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Killed"); e.DisplayMessage != "Task successfully killed" {
					t.Errorf("Killed = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "kill timeout: task ignores the signal", jobType: structs.JobTypeService,
			config: map[string]any{"kill_after": "10s"}, kill: true, timeout: 20 * time.Millisecond,
			want: []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"},
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Terminated"); e.ExitCode != 137 || e.Signal != 9 {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "driver wait never returns: kill still completes", jobType: structs.JobTypeService,
			config: map[string]any{"wait_never_returns": true}, kill: true, timeout: 20 * time.Millisecond,
			want: []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"},
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Killed"); e.KillError == "" {
					t.Errorf("Killed without a kill error: %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "unrecoverable start error", jobType: structs.JobTypeService,
			config: map[string]any{"start_error": "no such binary"}, policy: attempts1,
			want:   []string{"Received", "Task Setup", "Driver Failure", "Not Restarting"},
			failed: true,
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Driver Failure"); !strings.Contains(e.DisplayMessage, "no such binary") {
					t.Errorf("Driver Failure = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Not Restarting"); e.DisplayMessage != ReasonUnrecoverable {
					t.Errorf("Not Restarting = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "recoverable start error is restarted", jobType: structs.JobTypeService,
			config: map[string]any{"start_error": "busy", "start_error_recoverable": true}, policy: attempts1,
			want:   []string{"Received", "Task Setup", "Driver Failure", "Restarting", "Driver Failure", "Not Restarting"},
			failed: true, restarts: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				task := &structs.Task{Config: tc.config, RestartPolicy: tc.policy, KillTimeout: tc.timeout, Lifecycle: tc.lc}
				h := newHarness(t, testAlloc(tc.jobType, task), nil, nil)
				go h.tr.Run()
				if tc.kill {
					settle(t, "task running", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
					if err := h.tr.Kill(context.Background(), structs.NewTaskEvent(structs.TaskKilling)); err != nil {
						t.Fatal(err)
					}
				}
				waitClosed(t, "run loop exit", h.tr.WaitCh())
				st := h.tr.TaskState()
				if got := eventTypes(st); !slices.Equal(got, tc.want) {
					t.Fatalf("events = %q\nwant     %q", got, tc.want)
				}
				if st.State != structs.TaskStateDead || st.Failed != tc.failed || st.Restarts != tc.restarts {
					t.Errorf("state = %s failed=%v restarts=%d", st.State, st.Failed, st.Restarts)
				}
				if tc.check != nil {
					tc.check(t, st)
				}
				_, stored, _ := h.db.GetTaskRunnerState(h.alloc.ID, "web")
				if stored == nil || len(stored.Events) != len(st.Events) || stored.State != st.State {
					t.Errorf("stored state = %+v", stored)
				}
				if h.notes.count() == 0 {
					t.Errorf("the alloc runner was never notified")
				}
			})
		})
	}
}

func TestTaskRunnerRestartModeDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := &structs.RestartPolicy{Attempts: 1, Interval: 100 * time.Millisecond, Delay: 5 * time.Millisecond, Mode: structs.RestartPolicyModeDelay}
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{
			Config: map[string]any{"run_for": "1ms", "exit_code": 1}, RestartPolicy: policy}), nil, nil)
		go h.tr.Run()
		// Two intervals: a restart within the policy, the attempts spent,
		// a restart delayed to the interval's end, and one more after it.
		time.Sleep(2 * policy.Interval)
		settle(t, "a delayed restart", func() bool {
			for _, e := range h.tr.TaskState().Events {
				if e.Type == structs.TaskRestarting && strings.Contains(e.RestartReason, `mode is "delay"`) {
					return true
				}
			}
			return false
		})
		settle(t, "restart after the delay", func() bool { return h.tr.TaskState().Restarts >= 3 })
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		st := h.tr.TaskState()
		if st.Failed || st.State != structs.TaskStateDead {
			t.Errorf("mode delay must never fail the task: %+v", st)
		}
	})
}

func TestTaskRunnerKillBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}}), nil, nil)
		done := make(chan error, 1)
		go func() { done <- h.tr.Kill(context.Background(), nil) }()
		settle(t, "kill marked", func() bool { return h.tr.killContext().Err() != nil })
		h.tr.Run()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got, want := eventTypes(h.tr.TaskState()), []string{"Received", "Killed"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})
}

// blockingHook blocks in Prestart until its context is done.
type blockingHook struct{ entered chan struct{} }

func (*blockingHook) Name() string { return "blocking" }
func (h *blockingHook) Prestart(ctx context.Context, _ *PrestartRequest, _ *PrestartResponse) error {
	close(h.entered)
	<-ctx.Done()
	return ctx.Err()
}

func TestTaskRunnerKillDuringPrestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}}), nil, nil)
		hook := &blockingHook{entered: make(chan struct{})}
		h.tr.prestartHooks = append(h.tr.prestartHooks, hook)
		go h.tr.Run()
		waitClosed(t, "hook entered", hook.entered)
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		st := h.tr.TaskState()
		if got, want := eventTypes(st), []string{"Received", "Task Setup", "Killed"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if st.Failed {
			t.Errorf("a killed task is not failed")
		}
	})
}

func TestTaskRunnerKillDuringStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"start_block_for": "10s"}}), nil, nil)
		go h.tr.Run()
		settle(t, "task setup", func() bool { return findEvent(h.tr.TaskState(), "Task Setup") != nil })
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if got, want := eventTypes(h.tr.TaskState()), []string{"Received", "Task Setup", "Killed"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})
}

func TestTaskRunnerKillDuringRestartDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Hour, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1ms"}, RestartPolicy: policy}), nil, nil)
		go h.tr.Run()
		time.Sleep(time.Millisecond) // the task's run_for
		settle(t, "restarting", func() bool { return findEvent(h.tr.TaskState(), "Restarting") != nil })
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		want := []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Killed"}
		if got := eventTypes(h.tr.TaskState()); !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})
}

func TestTaskRunnerKillReasonEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}}), nil, nil)
		go h.tr.Run()
		settle(t, "running", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
		if err := h.tr.Kill(context.Background(), structs.NewTaskEvent(structs.TaskLeaderDead)); err != nil {
			t.Fatal(err)
		}
		want := []string{"Received", "Task Setup", "Started", "Leader Task Dead", "Killing", "Terminated", "Killed"}
		if got := eventTypes(h.tr.TaskState()); !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})
}

func TestTaskRunnerShutdownLeavesTaskRunning(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(map[bool]string{false: "normal", true: "wait never returns"}[never], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				driver := mock.New(nil)
				defer driver.Shutdown()
				db := state.NewMemDB()
				alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"wait_never_returns": never}})
				h := newHarness(t, alloc, driver, db)
				go h.tr.Run()
				settle(t, "running", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
				h.tr.Shutdown()
				ls, _, err := db.GetTaskRunnerState(alloc.ID, "web")
				if err != nil || ls == nil || ls.TaskHandle == nil {
					t.Fatalf("handle not persisted: %+v %v", ls, err)
				}
				if !strings.HasPrefix(ls.TaskHandle.Config.ID, alloc.ID+"/web/") || ls.InvocationID == "" {
					t.Errorf("task ID = %q invocation = %q", ls.TaskHandle.Config.ID, ls.InvocationID)
				}
				st, err := driver.InspectTask(context.Background(), ls.TaskHandle.Config.ID)
				if err != nil || st.State != drivers.TaskStateRunning {
					t.Fatalf("task not left running: %+v %v", st, err)
				}

				// A new runner restores the state and re-attaches.
				h2 := newHarness(t, alloc, driver, db)
				if err := h2.tr.Restore(); err != nil {
					t.Fatal(err)
				}
				go h2.tr.Run()
				if !never {
					if err := h2.tr.Kill(context.Background(), nil); err != nil {
						t.Fatal(err)
					}
					got := eventTypes(h2.tr.TaskState())
					want := []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}
					if !slices.Equal(got, want) {
						t.Errorf("events after re-attach = %q, want %q", got, want)
					}
				} else {
					h2.tr.Shutdown()
				}
			})
		})
	}
}

func TestTaskRunnerRestartAndSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}}), nil, nil)
		if err := h.tr.Restart(context.Background(), nil); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("Restart before start: %v", err)
		}
		go h.tr.Run()
		settle(t, "running", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
		h.tr.mu.RLock()
		first := h.tr.local.InvocationID
		h.tr.mu.RUnlock()
		if err := h.tr.Signal(context.Background(), "SIGHUP"); err != nil {
			t.Fatal(err)
		}
		if err := h.tr.Restart(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		settle(t, "restarted", func() bool {
			st := h.tr.TaskState()
			return st.Restarts == 1 && st.State == structs.TaskStateRunning
		})
		h.tr.mu.RLock()
		second := h.tr.local.InvocationID
		h.tr.mu.RUnlock()
		if first == second || len(second) != 8 {
			t.Errorf("invocation IDs %q then %q", first, second)
		}
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		// Only the latest maxTaskEvents are kept.
		want := []string{"Started", "Signaling", "Restart Signaled", "Killing", "Terminated", "Restarting", "Started", "Killing", "Terminated", "Killed"}
		if got := eventTypes(h.tr.TaskState()); !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
	})
}

func TestTaskRunnerEnvAndLogPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeBatch, &structs.Task{Config: map[string]any{"run_for": "1ms", "stdout_string": "hello"}, Env: map[string]string{"GREETING": "hi"}})
		h := newHarness(t, alloc, nil, nil)
		h.tr.Run()
		cfg, err := h.tr.buildTaskConfig(alloc, alloc.Job.TaskGroups[0].Tasks[0], "abcd1234")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Env["NOMAD_ALLOC_ID"] != alloc.ID || cfg.Env["GREETING"] != "hi" || cfg.Env["NOMAD_TASK_NAME"] != "web" || cfg.Env["NOMAD_DC"] != "dc1" {
			t.Errorf("env = %v", cfg.Env)
		}
		wantOut, wantErr := h.dir.LogPaths("web")
		if cfg.StdoutPath != wantOut || cfg.StderrPath != wantErr || !strings.HasSuffix(wantOut, "/alloc/logs/web.stdout.0") {
			t.Errorf("log paths = %q %q", cfg.StdoutPath, cfg.StderrPath)
		}
		if cfg.ID != alloc.ID+"/web/abcd1234" {
			t.Errorf("ID = %q", cfg.ID)
		}
	})
}

// The runner owns its events: the event a caller passes (one event may be
// given to every task of an alloc) is copied, never modified nor kept.
func TestTaskRunnerCopiesCallerEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}}), nil, nil)
		ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested restart")
		h.tr.EmitEvent(ev)
		if ev.DisplayMessage != "" {
			t.Errorf("caller's event was modified: %q", ev.DisplayMessage)
		}
		ev.RestartReason = "changed later"
		if got := findEvent(h.tr.TaskState(), structs.TaskRestartSignal); got.RestartReason != "User requested restart" {
			t.Errorf("stored event follows the caller's changes: %q", got.RestartReason)
		}
	})
}

// startRecorder is a mock driver that records the task IDs it starts.
type startRecorder struct {
	*mock.Driver
	mu  sync.Mutex
	ids []string
}

func (d *startRecorder) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.ids = append(d.ids, cfg.ID)
	d.mu.Unlock()
	return d.Driver.StartTask(ctx, cfg)
}

func (d *startRecorder) started() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.ids)
}

// Every start gets a new random invocation ID (a UUID's first 8 hex
// digits), never a restart count: IDs of two runs of the same task differ
// even across runners.
func TestTaskRunnerInvocationIDsAreRandom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mockDriver := mock.New(nil)
		defer mockDriver.Shutdown()
		rec := &startRecorder{Driver: mockDriver}
		policy := &structs.RestartPolicy{Attempts: 4, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail}
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1ms", "exit_code": 1}, RestartPolicy: policy})
		var ids []string
		for range 2 { // two runners of the same alloc and task
			dir := allocdir.New(t.TempDir(), alloc.ID)
			if err := dir.Build(); err != nil {
				t.Fatal(err)
			}
			tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: rec, StateDB: state.NewMemDB()})
			if err != nil {
				t.Fatal(err)
			}
			tr.Run()
			if st := tr.TaskState(); st.Restarts != 4 {
				t.Fatalf("restarts = %d", st.Restarts)
			}
		}
		ids = rec.started()
		if len(ids) != 10 {
			t.Fatalf("started %d times, want 10", len(ids))
		}
		seen := map[string]bool{}
		prefix := alloc.ID + "/web/"
		for i, id := range ids {
			inv, ok := strings.CutPrefix(id, prefix)
			if !ok || len(inv) != 8 || strings.Trim(inv, "0123456789abcdef") != "" {
				t.Errorf("task ID %q: want %s<8 hex digits>", id, prefix)
			}
			if inv == fmt.Sprint(i%5) || seen[inv] {
				t.Errorf("invocation %d = %q: not random (seen before: %v)", i, inv, seen[inv])
			}
			seen[inv] = true
		}
	})
}

// hangingStop is a mock driver whose StopTask ignores its context and
// blocks until release is closed: a misbehaving plugin.
type hangingStop struct {
	*mock.Driver
	release chan struct{}
}

func (d *hangingStop) StopTask(ctx context.Context, id string, timeout time.Duration, sig string) error {
	<-d.release
	return d.Driver.StopTask(ctx, id, timeout, sig)
}

// A driver whose StopTask never returns cannot hang a kill: the runner
// gives up after the kill timeout and grace, records the failure and
// force-destroys the task.
func TestTaskRunnerKillWithHangingStopTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mockDriver := mock.New(nil)
		defer mockDriver.Shutdown()
		driver := &hangingStop{Driver: mockDriver, release: make(chan struct{})}
		defer close(driver.release) // lets the abandoned call return before the leak check
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}, KillTimeout: 20 * time.Millisecond})
		dir := allocdir.New(t.TempDir(), alloc.ID)
		if err := dir.Build(); err != nil {
			t.Fatal(err)
		}
		tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: driver,
			StateDB: state.NewMemDB(), KillGrace: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		go tr.Run()
		settle(t, "running", func() bool { return tr.TaskState().State == structs.TaskStateRunning })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tr.Kill(ctx, nil); err != nil {
			t.Fatalf("Kill hung on the driver: %v", err)
		}
		st := tr.TaskState()
		want := []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}
		if got := eventTypes(st); !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if e := findEvent(st, "Killed"); e.KillError == "" {
			t.Errorf("Killed without the kill error")
		}
	})
}

// oomDriver is a mock driver whose tasks end as the kernel's OOM killer
// would end them.
type oomDriver struct{ *mock.Driver }

func (d oomDriver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	ch := make(chan *drivers.ExitResult, 1)
	ch <- &drivers.ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true}
	close(ch)
	return ch, nil
}

// Terminated carries the exit code, the signal and the OOM kill.
func TestTaskRunnerTerminatedOOM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mockDriver := mock.New(nil)
		defer mockDriver.Shutdown()
		alloc := testAlloc(structs.JobTypeBatch, &structs.Task{Config: map[string]any{}})
		dir := allocdir.New(t.TempDir(), alloc.ID)
		if err := dir.Build(); err != nil {
			t.Fatal(err)
		}
		tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: oomDriver{mockDriver}, StateDB: state.NewMemDB()})
		if err != nil {
			t.Fatal(err)
		}
		tr.Run()
		st := tr.TaskState()
		want := []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"}
		if got := eventTypes(st); !slices.Equal(got, want) {
			t.Fatalf("events = %q, want %q", got, want)
		}
		e := findEvent(st, "Terminated")
		if !e.OOMKilled || e.ExitCode != 137 || e.Signal != 9 || e.DisplayMessage != "Exit Code: 137, Signal: 9, OOM Killed" {
			t.Errorf("Terminated = %+v", e)
		}
		if !st.Failed {
			t.Errorf("an OOM-killed batch task is not failed")
		}
	})
}
