package allocrunner

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// orderDB records, in order, the allocation puts and the start intents a
// runner writes; PutAllocation fails with putErr when it is set.
type orderDB struct {
	*state.MemDB
	putErr error

	mu  sync.Mutex // guards the field below
	ops []string
}

func (d *orderDB) record(op string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops = append(d.ops, op)
}

func (d *orderDB) recorded() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.ops)
}

func (d *orderDB) PutAllocation(a *structs.Allocation) error {
	d.record("alloc")
	if d.putErr != nil {
		return d.putErr
	}
	return d.MemDB.PutAllocation(a)
}

func (d *orderDB) PutTaskRunnerLocalState(allocID, task string, ls *state.LocalState) error {
	if ls != nil && ls.StartIntent != nil {
		d.record("start intent")
	}
	return d.MemDB.PutTaskRunnerLocalState(allocID, task, ls)
}

// newDBRunner returns a runner of alloc on a mock driver, with db.
func newDBRunner(t *testing.T, alloc *structs.Allocation, db state.StateDB) (*AllocRunner, *recorder) {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	rec := &recorder{}
	ar, err := New(&Config{
		Alloc:        alloc,
		AllocDirRoot: t.TempDir(),
		StateDB:      db,
		Drivers:      func(string) (drivers.DriverPlugin, error) { return driver, nil },
		StateUpdater: rec,
		Node:         &structs.Node{ID: "node1", Datacenter: "dc1"},
		KillGrace:    200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ar, rec
}

// TestRunPersistsTheAllocBeforeAnyTaskStarts: the client no longer writes
// a new allocation before handing it over (it would hold its lock across
// the fsync); the runner does, first, so that a restarted agent knows of
// every allocation whose task may have started.
func TestRunPersistsTheAllocBeforeAnyTaskStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &orderDB{MemDB: state.NewMemDB()}
		alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
		ar, rec := newDBRunner(t, alloc, db)
		go ar.Run()
		t.Cleanup(ar.Destroy)
		// The Client is sent each state before the runner's listeners are.
		waitPublished(t, ar, "the alloc running", func(a *structs.Allocation) bool { return a.ClientStatus == structs.AllocClientStatusRunning })
		if u := rec.last(); u == nil || u.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("last update = %+v, want running", u)
		}
		if ops := db.recorded(); !slices.Equal(ops, []string{"alloc", "start intent"}) {
			t.Errorf("writes = %q, want the alloc, then the start intent", ops)
		}
		stored, _, err := db.GetAllAllocations()
		if err != nil || len(stored) != 1 || stored[0].ID != alloc.ID {
			t.Errorf("stored allocations = %v, %v; want the one alloc", stored, err)
		}
	})
}

// TestRunFailsTheAllocWhenItCannotBePersisted: no task may start that a
// restarted agent would not know of.
func TestRunFailsTheAllocWhenItCannotBePersisted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &orderDB{MemDB: state.NewMemDB(), putErr: errors.New("disk full")}
		alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
		ar, rec := newDBRunner(t, alloc, db)
		go ar.Run()
		waitClosed(t, "Run to return", ar.WaitCh())
		u := rec.last()
		if u == nil || u.ClientStatus != structs.AllocClientStatusFailed || !strings.Contains(u.ClientDescription, "disk full") {
			t.Fatalf("last update = %+v, want failed saying why", u)
		}
		if st := u.TaskStates["web"]; st == nil || !st.StartedAt.IsZero() {
			t.Errorf("task state = %+v: the task must never start", st)
		}
		if ops := db.recorded(); !slices.Equal(ops, []string{"alloc"}) {
			t.Errorf("writes = %q, want only the failed alloc put", ops)
		}
		ar.Destroy()
	})
}

// TestRestoredRunnerDoesNotRewriteItsAlloc: a restored allocation is in
// the state already.
func TestRestoredRunnerDoesNotRewriteItsAlloc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &orderDB{MemDB: state.NewMemDB()}
		alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
		if err := db.MemDB.PutAllocation(alloc); err != nil {
			t.Fatal(err)
		}
		ar, _ := newDBRunner(t, alloc, db)
		if err := ar.Restore(); err != nil {
			t.Fatal(err)
		}
		go ar.Run()
		t.Cleanup(ar.Destroy)
		waitChange(t, ar, "the task's start", isRunning(ar)) // the start intent is written before the start
		if ops := db.recorded(); !slices.Contains(ops, "start intent") {
			t.Fatalf("writes = %q: the task started without a start intent", ops)
		}
		if ops := db.recorded(); slices.Contains(ops, "alloc") {
			t.Errorf("writes = %q: a restored runner wrote its alloc again", ops)
		}
	})
}
