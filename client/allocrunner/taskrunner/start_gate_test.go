package taskrunner

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/structs"
)

// fakeGate admits a start once admit is closed; entered is closed when a
// start asks for its turn.
type fakeGate struct {
	entered chan struct{}
	admit   chan struct{}
	left    atomic.Int32
}

func (g *fakeGate) Enter(ctx context.Context) (func(), error) {
	close(g.entered)
	select {
	case <-g.admit:
		return func() { g.left.Add(1) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newGatedRunner(t *testing.T, gate StartGate) (*TaskRunner, *startRecorder, *state.MemDB) {
	t.Helper()
	driver := &startRecorder{Driver: mock.New(nil)}
	t.Cleanup(driver.Shutdown)
	alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
	dir := allocdir.New(t.TempDir(), alloc.ID)
	if err := dir.Build(); err != nil {
		t.Fatal(err)
	}
	db := state.NewMemDB()
	tr, err := New(&Config{
		Alloc:     alloc,
		Task:      alloc.Job.TaskGroups[0].Tasks[0],
		AllocDir:  dir,
		Driver:    driver,
		StateDB:   db,
		Node:      &structs.Node{ID: "node1", Datacenter: "dc1"},
		KillGrace: 200 * time.Millisecond,
		StartGate: gate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr, driver, db
}

// startIntent returns the start intent the runner persisted, nil if none.
func startIntent(t *testing.T, tr *TaskRunner, db *state.MemDB) any {
	t.Helper()
	ls, _, err := db.GetTaskRunnerState(tr.allocID, tr.taskName)
	if err != nil {
		t.Fatal(err)
	}
	if ls == nil || ls.StartIntent == nil {
		return nil
	}
	return ls.StartIntent
}

func TestTaskRunnerStartsInItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &fakeGate{entered: make(chan struct{}), admit: make(chan struct{})}
		tr, driver, db := newGatedRunner(t, gate)
		go tr.Run()
		t.Cleanup(func() { _ = tr.Kill(context.Background(), nil) })
		waitClosed(t, "the start to ask for its turn", gate.entered)
		if got := driver.started(); len(got) != 0 {
			t.Fatalf("started %q before its turn", got)
		}
		if intent := startIntent(t, tr, db); intent != nil {
			t.Fatalf("start intent %+v written before the turn", intent)
		}
		close(gate.admit)
		settle(t, "the task running", func() bool { return tr.TaskState().State == structs.TaskStateRunning })
		if got := len(driver.started()); got != 1 {
			t.Errorf("%d starts, want 1", got)
		}
		if n := gate.left.Load(); n != 1 {
			t.Errorf("the turn was left %d times after the start, want 1", n)
		}
	})
}

func TestTaskRunnerKilledWaitingForItsTurnNeverStarts(t *testing.T) {
	gate := &fakeGate{entered: make(chan struct{}), admit: make(chan struct{})}
	tr, driver, db := newGatedRunner(t, gate)
	go tr.Run()
	waitClosed(t, "the start to ask for its turn", gate.entered)
	if err := tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "Run to return", tr.WaitCh())
	st := tr.TaskState()
	if got, want := eventTypes(st), []string{"Received", "Task Setup", "Killed"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	if st.Failed {
		t.Errorf("a task killed before its start is not failed")
	}
	if got := driver.started(); len(got) != 0 {
		t.Errorf("started %q", got)
	}
	if intent := startIntent(t, tr, db); intent != nil {
		t.Errorf("start intent %+v left behind", intent)
	}
}
