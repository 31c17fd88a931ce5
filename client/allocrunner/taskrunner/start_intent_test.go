package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// intentDriver is the mock driver as a shim-based driver behaves after an
// agent restart: RecoverTask fails once its context is done (it talks to
// the shim under it), and finds a task by a start intent (a handle without
// DriverState) among the tasks it runs, else says ErrTaskNotFound. It
// records the starts asked of it.
type intentDriver struct {
	*mock.Driver
	recoverErr error // when set, RecoverTask fails with it

	mu     sync.Mutex // guards the field below
	starts []string
}

func (d *intentDriver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.starts = append(d.starts, cfg.ID)
	d.mu.Unlock()
	return d.Driver.StartTask(ctx, cfg)
}

func (d *intentDriver) started() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.starts)
}

func (d *intentDriver) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("recover task: attach to shim: %w", err)
	}
	if d.recoverErr != nil {
		return d.recoverErr
	}
	if len(h.DriverState) > 0 {
		return d.Driver.RecoverTask(ctx, h)
	}
	if _, err := d.Driver.InspectTask(ctx, h.Config.ID); err != nil {
		return fmt.Errorf("recover task: no shim started it: %w", drivers.ErrTaskNotFound)
	}
	return nil
}

// running reports whether the mock runs the task with ID id (a task
// destroyed is gone).
func (d *intentDriver) running(t *testing.T, id string) bool {
	t.Helper()
	st, err := d.Driver.InspectTask(context.Background(), id)
	if errors.Is(err, drivers.ErrTaskNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("inspect %s: %v", id, err)
	}
	return st.State == drivers.TaskStateRunning
}

// previousAgentStart starts the task of alloc directly in the driver, as
// the agent that died did, with invocation inv, and returns its config
// and handle.
func previousAgentStart(t *testing.T, d *intentDriver, alloc *structs.Allocation, dir *allocdir.AllocDir, inv string) (*drivers.TaskConfig, *drivers.TaskHandle) {
	t.Helper()
	tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: d, StateDB: state.NewMemDB()})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tr.buildTaskConfig(alloc, alloc.Job.TaskGroups[0].Tasks[0], inv)
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.Driver.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, h
}

// restoreWith persists the state an agent left: ls, and a task state
// (running with a Started event when running, else pending).
func restoreWith(t *testing.T, db *state.MemDB, alloc *structs.Allocation, ls *state.LocalState, running bool) {
	t.Helper()
	ts := structs.NewTaskState()
	types := []string{structs.TaskReceived}
	if running {
		ts.State = structs.TaskStateRunning
		ts.StartedAt = time.Now()
		types = append(types, structs.TaskStarted)
	}
	for _, typ := range types {
		ts.Events = append(ts.Events, structs.NewTaskEvent(typ).PopulateDisplayMessage())
	}
	if err := db.PutTaskState(alloc.ID, "web", ts); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTaskRunnerLocalState(alloc.ID, "web", ls); err != nil {
		t.Fatal(err)
	}
}

// TestTaskRunnerKillWhileReattaching: the servers stopped the alloc while
// the agent was down (an update was pending), so the restored runner is
// told to kill its task before it re-attached. It must re-attach and kill
// the task for real, not give it up as lost and report it killed while it
// runs on.
func TestTaskRunnerKillWhileReattaching(t *testing.T) {
	d := &intentDriver{Driver: mock.New(nil)}
	defer d.Shutdown()
	db := state.NewMemDB()
	alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
	h := newHarness(t, alloc, d.Driver, db)
	h.tr.driver = d
	_, handle := previousAgentStart(t, d, alloc, h.dir, "old")
	restoreWith(t, db, alloc, &state.LocalState{InvocationID: "old", TaskHandle: handle}, true)
	if err := h.tr.Restore(); err != nil {
		t.Fatal(err)
	}
	h.tr.RequestKill(structs.NewTaskEvent(structs.TaskKilling).SetKillReason("alloc stopped by the server"))
	go h.tr.Run()
	waitClosed(t, "the runner to finish", h.tr.WaitCh())

	if d.running(t, handle.Config.ID) {
		t.Error("the task still runs after the runner reported it killed")
	}
	st := h.tr.TaskState()
	if got, want := eventTypes(st), []string{"Received", "Started", "Killing", "Terminated", "Killed"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if e := findEvent(st, "Killed"); e == nil || e.KillError != "" {
		t.Errorf("Killed event = %+v, want a clean kill", e)
	}
	if st.State != structs.TaskStateDead || st.Failed {
		t.Errorf("state %s failed %v, want dead and not failed", st.State, st.Failed)
	}
}

// TestTaskRunnerReattachRecordsTheStart: an agent that died after it
// saved the task's handle and before it recorded the task running left a
// pending task with a handle. The restarted runner re-attaches and must
// record the task running (it stayed pending for ever, and so did its
// allocation on the servers).
func TestTaskRunnerReattachRecordsTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &intentDriver{Driver: mock.New(nil)}
		defer d.Shutdown()
		db := state.NewMemDB()
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
		h := newHarness(t, alloc, d.Driver, db)
		h.tr.driver = d
		_, handle := previousAgentStart(t, d, alloc, h.dir, "old")
		restoreWith(t, db, alloc, &state.LocalState{InvocationID: "old", TaskHandle: handle}, false)
		if err := h.tr.Restore(); err != nil {
			t.Fatal(err)
		}
		go h.tr.Run()
		defer func() {
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Error(err)
			}
		}()
		waitState(t, h.tr, "the re-attached task to be recorded running", isRunning)
		if got, want := eventTypes(h.tr.TaskState()), []string{"Received", "Started"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if starts := d.started(); len(starts) != 0 {
			t.Errorf("the runner started %v again", starts)
		}
	})
}

// TestTaskRunnerStartIntent: an agent that died while starting the task
// left a start intent and no handle. The restarted runner asks the driver
// to find the task by the intent: a task found is re-attached (never
// started a second time), a task never started is started once, a task
// that cannot be found for another reason is lost; a kill requested
// meanwhile kills the task found.
func TestTaskRunnerStartIntent(t *testing.T) {
	tests := []struct {
		name         string
		prevStarted  bool  // the dead agent's start got as far as the task
		recoverErr   error // RecoverTask fails with it
		kill         bool  // killed before Run
		wantStarts   int   // starts asked of the driver by this runner
		wantState    string
		wantEvents   []string
		wantPrevDead bool // the previous start's task is no longer running
	}{
		{name: "task found", prevStarted: true, wantStarts: 0, wantState: structs.TaskStateRunning,
			wantEvents: []string{"Received", "Started"}},
		{name: "never started", wantStarts: 1, wantState: structs.TaskStateRunning,
			wantEvents: []string{"Received", "Task Setup", "Started"}},
		{name: "lost", prevStarted: true, recoverErr: errors.New("shim does not answer"), wantStarts: 0,
			wantState: structs.TaskStateDead, wantEvents: []string{"Received", "Driver", "Terminated", "Not Restarting"},
			wantPrevDead: true}, // the mock kills what it is told to destroy
		{name: "found and killed", prevStarted: true, kill: true, wantStarts: 0, wantState: structs.TaskStateDead,
			wantEvents: []string{"Received", "Started", "Killing", "Terminated", "Killed"}, wantPrevDead: true},
		{name: "never started and killed", kill: true, wantStarts: 0, wantState: structs.TaskStateDead,
			wantEvents: []string{"Received", "Killed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &intentDriver{Driver: mock.New(nil)}
				defer d.Shutdown()
				db := state.NewMemDB()
				alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
				h := newHarness(t, alloc, d.Driver, db)
				h.tr.driver = d
				var cfg *drivers.TaskConfig
				if tt.prevStarted {
					cfg, _ = previousAgentStart(t, d, alloc, h.dir, "prev0001")
				} else {
					tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: h.dir, Driver: d, StateDB: state.NewMemDB()})
					if err != nil {
						t.Fatal(err)
					}
					if cfg, err = tr.buildTaskConfig(alloc, alloc.Job.TaskGroups[0].Tasks[0], "prev0001"); err != nil {
						t.Fatal(err)
					}
				}
				restoreWith(t, db, alloc, &state.LocalState{InvocationID: "prev0001", StartIntent: cfg}, false)
				d.recoverErr = tt.recoverErr
				if err := h.tr.Restore(); err != nil {
					t.Fatal(err)
				}
				if tt.kill {
					h.tr.RequestKill(structs.NewTaskEvent(structs.TaskKilling))
				}
				go h.tr.Run()
				defer func() {
					if err := h.tr.Kill(context.Background(), nil); err != nil {
						t.Error(err)
					}
				}()
				waitState(t, h.tr, "the runner to settle", func(st *structs.TaskState) bool {
					return st.State == tt.wantState && len(st.Events) >= len(tt.wantEvents)
				})
				st := h.tr.TaskState()
				if got := eventTypes(st); !slices.Equal(got, tt.wantEvents) {
					t.Errorf("events = %q, want %q", got, tt.wantEvents)
				}
				starts := d.started()
				if len(starts) != tt.wantStarts {
					t.Fatalf("the runner started %v, want %d starts", starts, tt.wantStarts)
				}
				if len(starts) == 1 && starts[0] == cfg.ID {
					t.Errorf("the new start reused the intent's invocation %s", cfg.ID)
				}
				if tt.prevStarted && tt.wantPrevDead == d.running(t, cfg.ID) {
					t.Errorf("the previous start's task running = %v, want %v", !tt.wantPrevDead, !tt.wantPrevDead)
				}
				ls, _, err := db.GetTaskRunnerState(alloc.ID, "web")
				if err != nil {
					t.Fatal(err)
				}
				if ls.StartIntent != nil {
					t.Errorf("the start intent %s is still persisted", ls.StartIntent.ID)
				}
				if tt.name == "task found" && (ls.TaskHandle == nil || ls.TaskHandle.Config.ID != cfg.ID || len(ls.TaskHandle.DriverState) != 0) {
					t.Errorf("handle = %+v, want the intent's config without driver state", ls.TaskHandle)
				}
				if tt.name == "lost" {
					if e := findEvent(st, "Terminated"); e.ExitCode != -1 || !strings.Contains(e.DisplayMessage, "shim does not answer") {
						t.Errorf("Terminated = %+v", e)
					}
				}
			})
		})
	}
}

// intentCheckingDB fails every local state write once fail is set, and
// lets a driver check what is on disk when it is asked to start.
type intentCheckingDB struct {
	*state.MemDB
	fail bool
}

func (db *intentCheckingDB) PutTaskRunnerLocalState(allocID, task string, ls *state.LocalState) error {
	if db.fail {
		return errors.New("disk full")
	}
	return db.MemDB.PutTaskRunnerLocalState(allocID, task, ls)
}

// aheadChecker is the mock driver that records, at each StartTask, the
// start intent the StateDB holds.
type aheadChecker struct {
	*mock.Driver
	db      state.StateDB
	alloc   string
	mu      sync.Mutex // guards the field below
	intents []string   // the persisted intent's ID at each start ("" if none)
}

func (d *aheadChecker) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	ls, _, err := d.db.GetTaskRunnerState(d.alloc, cfg.Name)
	id := ""
	if err == nil && ls != nil && ls.StartIntent != nil && ls.TaskHandle == nil && ls.InvocationID != "" &&
		strings.HasSuffix(cfg.ID, "/"+ls.InvocationID) {
		id = ls.StartIntent.ID
	}
	d.mu.Lock()
	d.intents = append(d.intents, id)
	d.mu.Unlock()
	return d.Driver.StartTask(ctx, cfg)
}

// TestTaskRunnerWritesStartIntentAhead: the invocation's intent is on
// disk before the driver is asked to start it, and replaced by the handle
// after; when the intent cannot be written, nothing is started.
func TestTaskRunnerWritesStartIntentAhead(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("write fails %v", fail), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := mock.New(nil)
				defer m.Shutdown()
				db := &intentCheckingDB{MemDB: state.NewMemDB(), fail: fail}
				alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
				d := &aheadChecker{Driver: m, db: db, alloc: alloc.ID}
				dir := allocdir.New(t.TempDir(), alloc.ID)
				if err := dir.Build(); err != nil {
					t.Fatal(err)
				}
				tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: d, StateDB: db})
				if err != nil {
					t.Fatal(err)
				}
				go tr.Run()
				defer func() {
					if err := tr.Kill(context.Background(), nil); err != nil {
						t.Error(err)
					}
				}()
				if fail {
					waitState(t, tr, "a start failure", func(st *structs.TaskState) bool { return findEvent(st, "Driver Failure") != nil })
					if e := findEvent(tr.TaskState(), "Driver Failure"); !strings.Contains(e.DriverError, "start intent") {
						t.Errorf("Driver Failure = %q", e.DriverError)
					}
					d.mu.Lock()
					defer d.mu.Unlock()
					if len(d.intents) != 0 {
						t.Errorf("the driver was asked to start %d times without an intent on disk", len(d.intents))
					}
					return
				}
				waitState(t, tr, "the task to run", isRunning)
				d.mu.Lock()
				intents := slices.Clone(d.intents)
				d.mu.Unlock()
				if len(intents) != 1 || intents[0] == "" {
					t.Fatalf("intents on disk at each start = %q, want the invocation's", intents)
				}
				ls, _, err := db.GetTaskRunnerState(alloc.ID, "web")
				if err != nil {
					t.Fatal(err)
				}
				if ls.StartIntent != nil || ls.TaskHandle == nil || ls.TaskHandle.Config.ID != intents[0] {
					t.Errorf("after the start: intent %+v handle %+v, want the handle of %s and no intent", ls.StartIntent, ls.TaskHandle, intents[0])
				}
			})
		})
	}
}
