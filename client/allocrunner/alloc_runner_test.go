package allocrunner

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) {
	// The destroy tests start real shims: this binary, as "shim".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0") // every shim's launcher exits
	goleak.VerifyTestMain(m)
}

// hungBound bounds a wait on an event outside a synctest bubble: a test
// that is hung fails instead of blocking the package, and no test relies
// on the bound's length.
const hungBound = time.Minute

// waitChange waits until cond holds, re-checking it at each task state
// change of ar (its changed broadcast), for a condition on the state that
// AllocState derives from the tasks'. In a bubble it lets fake time pass
// while nothing changes, so a restart delay runs its course.
func waitChange(t *testing.T, ar *AllocRunner, what string, cond func() bool) {
	t.Helper()
	bound := time.NewTimer(hungBound)
	defer bound.Stop()
	for {
		changed := ar.changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-bound.C:
			t.Fatalf("no %s after %s", what, hungBound)
		}
	}
}

// waitPublished waits until the runner publishes (to its listeners, after
// the Client was sent the same state) an alloc for which cond holds.
func waitPublished(t *testing.T, ar *AllocRunner, what string, cond func(*structs.Allocation) bool) {
	t.Helper()
	l := ar.Listen()
	defer l.Close()
	bound := time.NewTimer(hungBound)
	defer bound.Stop()
	for {
		select {
		case a, ok := <-l.Ch():
			if !ok {
				t.Fatalf("the runner closed its listeners before %s", what)
			}
			if cond(a) {
				return
			}
		case <-bound.C:
			t.Fatalf("no %s after %s", what, hungBound)
		}
	}
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hungBound):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// mockTask is a mock driver task; without run_for in config it runs until
// stopped (mock.UntilStopped).
func mockTask(name string, config map[string]any) *structs.Task {
	return &structs.Task{
		Name: name, Driver: mock.Name, Config: mock.UntilStopped(config), KillTimeout: time.Second,
		RestartPolicy: &structs.RestartPolicy{Interval: time.Hour, Mode: structs.RestartPolicyModeFail},
	}
}

func testAlloc(jobType string, tasks ...*structs.Task) *structs.Allocation {
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, Namespace: "default",
		TaskGroups: []*structs.TaskGroup{{Name: "group", Count: 1, Tasks: tasks}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.group[0]", NodeID: "node1", JobID: "job",
		Job: job, TaskGroup: "group", Namespace: "default", DesiredStatus: structs.AllocDesiredStatusRun, AllocModifyIndex: 10}
}

// recorder records the updates sent to the Client.
type recorder struct {
	mu      sync.Mutex
	updates []*structs.Allocation
}

func (r *recorder) AllocStateUpdated(a *structs.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, a)
}

func (r *recorder) last() *structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.updates) == 0 {
		return nil
	}
	return r.updates[len(r.updates)-1]
}

type harness struct {
	ar     *AllocRunner
	driver *mock.Driver
	db     *state.MemDB
	rec    *recorder
	root   string
}

func newHarness(t *testing.T, alloc *structs.Allocation) *harness {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	h := &harness{driver: driver, db: state.NewMemDB(), rec: &recorder{}, root: t.TempDir()}
	ar, err := New(&Config{
		Alloc:        alloc,
		AllocDirRoot: h.root,
		StateDB:      h.db,
		Drivers: func(name string) (drivers.DriverPlugin, error) {
			if name != mock.Name {
				return nil, structs.NotFound("driver", name)
			}
			return driver, nil
		},
		StateUpdater: h.rec,
		Node:         &structs.Node{ID: "node1", Datacenter: "dc1"},
		KillGrace:    200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.ar = ar
	return h
}

// checkKilledBy checks that a task was killed because of a reason event.
// The other task may end before this one has started, so the reason comes
// anywhere before the kill; a task that started ends with Killing,
// Terminated, Killed, one that did not with Killed alone.
func checkKilledBy(t *testing.T, st *structs.TaskState, reason string) {
	t.Helper()
	got := types(st)
	ri := slices.Index(got, reason)
	if ri < 0 || got[len(got)-1] != structs.TaskKilled || st.State != structs.TaskStateDead {
		t.Fatalf("events = %q: want %q and then Killed", got, reason)
	}
	if slices.Contains(got, structs.TaskStarted) {
		tail := got[len(got)-3:]
		if !slices.Equal(tail, []string{structs.TaskKilling, structs.TaskTerminated, structs.TaskKilled}) || ri > len(got)-3 {
			t.Errorf("events = %q: want %q before Killing, Terminated, Killed", got, reason)
		}
	}
}

func types(st *structs.TaskState) []string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return out
}

func TestAllocRunnerBatchCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeBatch, mockTask("a", map[string]any{"run_for": "5ms"}), mockTask("b", map[string]any{"run_for": "10ms"})))
		l := h.ar.Listen()
		defer l.Close()
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
		}
		last := h.rec.last()
		if last == nil || last.ClientStatus != structs.AllocClientStatusComplete || len(last.TaskStates) != 2 || last.NodeID != "node1" {
			t.Errorf("last update = %+v", last)
		}
		if last.Job != nil {
			t.Errorf("update carries the job; want only the client fields")
		}
		got := <-l.Ch()
		if got.ClientStatus != structs.AllocClientStatusComplete || got.Job == nil {
			t.Errorf("broadcast alloc = %s job=%v", got.ClientStatus, got.Job != nil)
		}
		if _, err := os.Stat(h.ar.AllocDir().LogDir); err != nil {
			t.Errorf("alloc dir not built: %v", err)
		}
		if h.ar.Alloc().ClientStatus != "" {
			t.Errorf("server alloc was mutated")
		}
		h.ar.Destroy()
		if _, err := os.Stat(h.ar.AllocDir().AllocDir); !os.IsNotExist(err) {
			t.Errorf("alloc dir not removed: %v", err)
		}
	})
}

func TestAllocRunnerLeaderDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader := mockTask("leader", map[string]any{"run_for": "10ms"})
		leader.Leader = true
		h := newHarness(t, testAlloc(structs.JobTypeBatch, leader, mockTask("follower", map[string]any{})))
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		checkKilledBy(t, st.TaskStates["follower"], structs.TaskLeaderDead)
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s", st.ClientStatus)
		}
		h.ar.Destroy()
	})
}

func TestAllocRunnerSiblingFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, mockTask("bad", map[string]any{"run_for": "10ms", "exit_code": 1}), mockTask("good", map[string]any{})))
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		checkKilledBy(t, st.TaskStates["good"], structs.TaskSiblingFailed)
		for _, ev := range st.TaskStates["good"].Events {
			if ev.Type == structs.TaskSiblingFailed && (ev.FailedSibling != "bad" || ev.DisplayMessage != `Task's sibling "bad" failed`) {
				t.Errorf("sibling event = %+v", ev)
			}
		}
		if st.ClientStatus != structs.AllocClientStatusFailed || st.TaskStates["good"].Failed {
			t.Errorf("status = %s, good failed = %v", st.ClientStatus, st.TaskStates["good"].Failed)
		}
		h.ar.Destroy()
	})
}

// countingHook counts update hook calls and records the last alloc.
type countingHook struct {
	mu    sync.Mutex
	calls int
	last  *structs.Allocation
}

func (*countingHook) Name() string { return "counting" }
func (h *countingHook) Update(_ context.Context, req *UpdateRequest, _ *UpdateResponse) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	h.last = req.Alloc
	return nil
}
func (h *countingHook) get() (int, *structs.Allocation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls, h.last
}

var _ updateHook = (*countingHook)(nil)

func TestAllocRunnerStopRunsNoUpdateHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader := mockTask("leader", map[string]any{})
		leader.Leader = true
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}), leader, mockTask("b", map[string]any{}))
		h := newHarness(t, alloc)
		hook := &countingHook{}
		h.ar.hooks = append(h.ar.hooks, hook)
		go h.ar.Run()
		waitChange(t, h.ar, "running", isRunning(h.ar))
		waitChange(t, h.ar, "all running", func() bool {
			for _, ts := range h.ar.AllocState().TaskStates {
				if ts.State != structs.TaskStateRunning {
					return false
				}
			}
			return true
		})

		stop := alloc.Copy()
		stop.DesiredStatus = structs.AllocDesiredStatusStop
		stop.AllocModifyIndex = 11
		h.ar.Update(stop)
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s", st.ClientStatus)
		}
		if calls, _ := hook.get(); calls != 0 {
			t.Errorf("update hooks ran %d times on a stop", calls)
		}
		if h.ar.Alloc().DesiredStatus != structs.AllocDesiredStatusStop {
			t.Errorf("Alloc() not replaced")
		}
		// The leader is killed first: its Killed precedes the others' Killing.
		leaderKilled := st.TaskStates["leader"].Events[len(st.TaskStates["leader"].Events)-1]
		for _, name := range []string{"a", "b"} {
			want := []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}
			evs := st.TaskStates[name].Events
			if got := types(st.TaskStates[name]); !slices.Equal(got, want) {
				t.Errorf("%s events = %q, want %q", name, got, want)
			}
			if evs[3].Time < leaderKilled.Time {
				t.Errorf("%s killed before the leader was dead", name)
			}
		}
		h.ar.Destroy()
	})
}

func TestAllocRunnerUpdateCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}))
		h := newHarness(t, alloc)
		hook := &countingHook{}
		h.ar.hooks = append(h.ar.hooks, hook)
		// Before Run nothing consumes updates: they must not block and only
		// the latest survives.
		for i := uint64(11); i <= 50; i++ {
			u := alloc.Copy()
			u.AllocModifyIndex = i
			h.ar.Update(u)
		}
		go h.ar.Run()
		settle(t, "update applied", func() bool { return h.ar.Alloc().AllocModifyIndex == 50 })
		settle(t, "update hook", func() bool { c, _ := hook.get(); return c == 1 })
		if _, last := hook.get(); last.AllocModifyIndex != 50 {
			t.Errorf("hook saw index %d", last.AllocModifyIndex)
		}
		// A stale update is ignored.
		stale := alloc.Copy()
		stale.AllocModifyIndex = 12
		h.ar.Update(stale)
		more := alloc.Copy()
		more.AllocModifyIndex = 51
		h.ar.Update(more)
		settle(t, "newer update", func() bool { return h.ar.Alloc().AllocModifyIndex == 51 })
		h.ar.Destroy()
		if c, _ := hook.get(); c > 2 {
			t.Errorf("update hook calls = %d", c)
		}
	})
}

func TestAllocRunnerDestroyWithoutRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}))
		h := newHarness(t, alloc)
		if err := h.db.PutAllocation(alloc); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { h.ar.Destroy(); close(done) }()
		waitClosed(t, "destroy", done)
		waitClosed(t, "wait ch", h.ar.WaitCh())
		h.ar.Run() // returns at once
		h.ar.Shutdown()
		allocs, _, _ := h.db.GetAllAllocations()
		if len(allocs) != 0 {
			t.Errorf("alloc state not deleted")
		}
		if !h.ar.IsDestroyed() {
			t.Errorf("not destroyed")
		}
	})
}

func TestAllocRunnerShutdownWithoutRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, mockTask("a", map[string]any{})))
		h.ar.Shutdown()
		waitClosed(t, "wait ch", h.ar.WaitCh())
		h.ar.Destroy()
	})
}

func TestAllocRunnerWaitNeverReturns(t *testing.T) {
	for _, destroy := range []bool{false, true} {
		name := map[bool]string{false: "shutdown", true: "destroy"}[destroy]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				task := mockTask("a", map[string]any{"wait_never_returns": true})
				task.KillTimeout = 10 * time.Millisecond
				h := newHarness(t, testAlloc(structs.JobTypeService, task))
				go h.ar.Run()
				waitChange(t, h.ar, "running", isRunning(h.ar))
				done := make(chan struct{})
				go func() {
					if destroy {
						h.ar.Destroy()
					} else {
						h.ar.Shutdown()
					}
					close(done)
				}()
				waitClosed(t, name, done)
				if !destroy {
					h.ar.Destroy() // kills the task left running
				}
			})
		})
	}
}

func TestAllocRunnerShutdownLeavesTasksRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}))
		h := newHarness(t, alloc)
		go h.ar.Run()
		waitChange(t, h.ar, "running", isRunning(h.ar))
		h.ar.Shutdown()
		ls, _, _ := h.db.GetTaskRunnerState(alloc.ID, "a")
		st, err := h.driver.InspectTask(context.Background(), ls.TaskHandle.Config.ID)
		if err != nil || st.State != drivers.TaskStateRunning {
			t.Fatalf("task not running after shutdown: %v %v", st, err)
		}
		// A new runner restores and re-attaches; its Destroy kills the task.
		ar2, err := New(&Config{Alloc: alloc, AllocDirRoot: h.root, StateDB: h.db,
			Drivers: func(string) (drivers.DriverPlugin, error) { return h.driver, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if err := ar2.Restore(); err != nil {
			t.Fatal(err)
		}
		if got := ar2.AllocState().ClientStatus; got != structs.AllocClientStatusRunning {
			t.Errorf("restored status = %s", got)
		}
		go ar2.Run()
		ar2.Destroy()
		if _, err := h.driver.InspectTask(context.Background(), ls.TaskHandle.Config.ID); err == nil {
			t.Errorf("task still known to the driver after destroy")
		}
	})
}

func TestAllocRunnerStoppedBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		post := mockTask("post", map[string]any{})
		post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}), post)
		alloc.DesiredStatus = structs.AllocDesiredStatusStop
		h := newHarness(t, alloc)
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if got, want := types(st.TaskStates["a"]), []string{"Received", "Killed"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s", st.ClientStatus)
		}
		h.ar.Destroy()
	})
}

func TestAllocRunnerLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pre := mockTask("init", map[string]any{"run_for": "5ms"})
		pre.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
		side := mockTask("sidecar", map[string]any{})
		side.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
		post := mockTask("cleanup", map[string]any{"run_for": "5ms"})
		post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
		main := mockTask("main", map[string]any{"run_for": "10ms"})
		h := newHarness(t, testAlloc(structs.JobTypeBatch, pre, side, main, post))
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("status = %s", st.ClientStatus)
		}
		if !(st.TaskStates["init"].FinishedAt.Before(st.TaskStates["main"].StartedAt) || st.TaskStates["init"].FinishedAt.Equal(st.TaskStates["main"].StartedAt)) {
			t.Errorf("main started before prestart finished")
		}
		if st.TaskStates["cleanup"].StartedAt.Before(st.TaskStates["main"].FinishedAt) {
			t.Errorf("poststop started before main finished")
		}
		if got := types(st.TaskStates["sidecar"]); !slices.Contains(got, structs.TaskMainDead) {
			t.Errorf("sidecar not killed when main died: %q", got)
		}
		h.ar.Destroy()
	})
}

func TestAllocRunnerPrerunFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, mockTask("a", map[string]any{}))
		h := newHarness(t, alloc)
		// A file where the alloc dir should be makes the alloc dir hook fail.
		if err := os.WriteFile(h.ar.AllocDir().AllocDir, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		st := h.ar.AllocState()
		if st.ClientStatus != structs.AllocClientStatusFailed || st.ClientDescription == "" {
			t.Errorf("status = %s (%s)", st.ClientStatus, st.ClientDescription)
		}
		if last := h.rec.last(); last == nil || last.ClientStatus != structs.AllocClientStatusFailed {
			t.Errorf("failure not reported: %+v", last)
		}
		h.ar.Destroy()
	})
}

// TestAllocRunnerStatusSummary: the summary that metrics read agrees with
// AllocState, before the run, while it runs, and after a failure.
func TestAllocRunnerStatusSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testAlloc(structs.JobTypeService, mockTask("bad", map[string]any{"run_for": "10ms", "exit_code": 1}), mockTask("good", map[string]any{})))
		check := func(when string) {
			t.Helper()
			st := h.ar.AllocState()
			status, tasks := h.ar.StatusSummary(nil)
			if status != st.ClientStatus || len(tasks) != len(st.TaskStates) {
				t.Fatalf("%s: summary %s %v, state %s with %d tasks", when, status, tasks, st.ClientStatus, len(st.TaskStates))
			}
			for _, ts := range tasks {
				if want := st.TaskStates[ts.Task]; want == nil || ts.State != want.State {
					t.Errorf("%s: task %s summary %q, state %+v", when, ts.Task, ts.State, want)
				}
			}
		}
		check("before Run")
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		check("after the failure")
		if status, _ := h.ar.StatusSummary(nil); status != structs.AllocClientStatusFailed {
			t.Errorf("status = %s, want failed", status)
		}
		h.ar.Destroy()
	})
}
