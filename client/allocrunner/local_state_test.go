package allocrunner

import (
	"context"
	"errors"
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

// newStateRunner returns a runner of alloc on db, on the real clock (in a
// synctest bubble, the bubble's fake time), with the given previous-alloc
// watcher.
func newStateRunner(t *testing.T, alloc *structs.Allocation, db state.StateDB, prev PrevAllocWatcher) *AllocRunner {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	ar, err := New(&Config{
		Alloc: alloc, AllocDirRoot: t.TempDir(), StateDB: db,
		Drivers:      func(string) (drivers.DriverPlugin, error) { return driver, nil },
		StateUpdater: &recorder{}, Node: &structs.Node{ID: "node1"}, KillGrace: 200 * time.Millisecond,
		PrevAllocWatcher: prev,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ar.Destroy)
	return ar
}

func verdict(healthy bool, at time.Time) *structs.AllocDeploymentStatus {
	return &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: at}
}

// heldARState is a StateDB whose PutAllocRunnerState can be held: it
// then waits until released.
type heldARState struct {
	state.StateDB
	mu   sync.Mutex    // guards hold
	hold chan struct{} // not nil: puts wait for it to be closed
}

func (db *heldARState) PutAllocRunnerState(allocID string, s *state.AllocRunnerLocalState) error {
	db.mu.Lock()
	hold := db.hold
	db.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return db.StateDB.PutAllocRunnerState(allocID, s)
}

// holdPuts holds the puts from now on and returns what releases them.
func (db *heldARState) holdPuts() (release func()) {
	hold := make(chan struct{})
	db.mu.Lock()
	db.hold = hold
	db.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			db.mu.Lock()
			db.hold = nil
			db.mu.Unlock()
			close(hold)
		})
	}
}

// TestHealthHookPersistsVerdict: a decided verdict is persisted with the
// deployment it was decided for, before it is shown (AllocState, and so
// the servers): a verdict the servers may act on survives an agent
// restart.
func TestHealthHookPersistsVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &heldARState{StateDB: state.NewMemDB()}
		alloc := deploymentAlloc(nil)
		ar := newStateRunner(t, alloc, db, nil)
		go ar.Run()
		settle(t, "running", isRunning(ar))
		release := db.holdPuts()
		t.Cleanup(release)
		time.Sleep(10 * time.Second) // min_healthy_time
		synctest.Wait()
		if ds := ar.AllocState().DeploymentStatus; ds != nil {
			t.Fatalf("deployment status %+v shown before it is persisted", ds)
		}
		release()
		settle(t, "healthy", func() bool { return ar.AllocState().DeploymentStatus.IsHealthy() })
		s, err := db.GetAllocRunnerState(alloc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s == nil || !s.DeploymentStatus.IsHealthy() || s.DeploymentID != "d1" || s.Version != state.AllocRunnerStateVersion {
			t.Fatalf("persisted state = %+v", s)
		}
	})
}

// TestHealthHookKeepsRestoredVerdict: a verdict decided before an agent
// restart for the alloc's deployment is kept as is (not tracked again,
// whatever the tasks do now); one for another deployment is dropped.
func TestHealthHookKeepsRestoredVerdict(t *testing.T) {
	decided := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		config     map[string]any
		saved      *state.AllocRunnerLocalState
		wantKept   bool
		wantHealth bool
	}{
		{name: "healthy stays healthy though the task fails now",
			config:   map[string]any{"run_for": "5ms", "exit_code": 1},
			saved:    &state.AllocRunnerLocalState{Version: 1, DeploymentID: "d1", DeploymentStatus: verdict(true, decided)},
			wantKept: true, wantHealth: true},
		{name: "unhealthy stays unhealthy though the task runs",
			saved:    &state.AllocRunnerLocalState{Version: 1, DeploymentID: "d1", DeploymentStatus: verdict(false, decided)},
			wantKept: true, wantHealth: false},
		{name: "verdict of another deployment is dropped",
			saved: &state.AllocRunnerLocalState{Version: 1, DeploymentID: "d0", DeploymentStatus: verdict(true, decided)}},
		{name: "newer layout is ignored",
			saved: &state.AllocRunnerLocalState{Version: state.AllocRunnerStateVersion + 1, DeploymentID: "d1", DeploymentStatus: verdict(true, decided)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := state.NewMemDB()
				alloc := deploymentAlloc(tt.config)
				if err := db.PutAllocRunnerState(alloc.ID, tt.saved); err != nil {
					t.Fatal(err)
				}
				ar := newStateRunner(t, alloc, db, nil)
				if err := ar.Restore(); err != nil {
					t.Fatal(err)
				}
				go ar.Run()
				if !tt.wantKept {
					settle(t, "tracking again", func() bool { return ar.AllocState().DeploymentStatus == nil })
					time.Sleep(time.Hour)
					settle(t, "decided again", func() bool {
						ds := ar.AllocState().DeploymentStatus
						return ds.IsHealthy() && !ds.Timestamp.Equal(decided)
					})
					return
				}
				// A tracker would decide within the healthy_deadline (a
				// minute): healthy for a running task, unhealthy for a
				// failed one.
				time.Sleep(time.Hour)
				synctest.Wait()
				if tt.config != nil && ar.AllocState().ClientStatus != structs.AllocClientStatusFailed {
					t.Fatalf("client status %s, want the task failed", ar.AllocState().ClientStatus)
				}
				ds := ar.AllocState().DeploymentStatus
				if ds == nil || ds.IsHealthy() != tt.wantHealth || ds.Healthy == nil || !ds.Timestamp.Equal(decided) {
					t.Fatalf("deployment status = %+v, want the restored verdict", ds)
				}
				// An update within the same deployment keeps it too.
				upd := alloc.Copy()
				upd.AllocModifyIndex++
				ar.Update(upd)
				time.Sleep(time.Hour)
				synctest.Wait()
				if ds := ar.AllocState().DeploymentStatus; ds == nil || ds.IsHealthy() != tt.wantHealth || !ds.Timestamp.Equal(decided) {
					t.Fatalf("after an update: deployment status = %+v", ds)
				}
			})
		})
	}
}

// countingWatcher is a PrevAllocWatcher that returns at once and counts
// its calls.
type countingWatcher struct {
	mu             sync.Mutex // guards the counts
	waits, migrate int
}

func (w *countingWatcher) Wait(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits++
	return nil
}

func (w *countingWatcher) Migrate(context.Context, *allocdir.AllocDir) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.migrate++
	return nil
}

func (*countingWatcher) IsWaiting() bool   { return false }
func (*countingWatcher) IsMigrating() bool { return false }

func (w *countingWatcher) counts() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waits, w.migrate
}

// TestAllocWatcherHookMigratesOnce: the migration is persisted as done; a
// runner restored before any task started (the agent went down between
// the migration and the start) neither waits nor migrates again, while one
// restored without the flag does.
func TestAllocWatcherHookMigratesOnce(t *testing.T) {
	alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{}))
	alloc.PreviousAllocation = "prev"

	db := state.NewMemDB()
	w1 := &countingWatcher{}
	ar := newStateRunner(t, alloc, db, w1)
	go ar.Run()
	waitChange(t, ar, "running", isRunning(ar))
	if waits, migrations := w1.counts(); waits != 1 || migrations != 1 {
		t.Fatalf("first run: waits %d migrations %d, want 1 1", waits, migrations)
	}
	s, err := db.GetAllocRunnerState(alloc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || !s.PrevAllocMigrated {
		t.Fatalf("persisted state = %+v, want PrevAllocMigrated", s)
	}

	tests := []struct {
		name      string
		migrated  bool
		wantCalls int
	}{
		{"migrated before the restart", true, 0},
		{"not migrated before the restart", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Only the alloc runner's state: no task ever started.
			db := state.NewMemDB()
			if err := db.PutAllocRunnerState(alloc.ID, &state.AllocRunnerLocalState{Version: 1, PrevAllocMigrated: tt.migrated}); err != nil {
				t.Fatal(err)
			}
			w := &countingWatcher{}
			ar := newStateRunner(t, alloc, db, w)
			if err := ar.Restore(); err != nil {
				t.Fatal(err)
			}
			go ar.Run()
			waitChange(t, ar, "running", isRunning(ar))
			if waits, migrations := w.counts(); waits != tt.wantCalls || migrations != tt.wantCalls {
				t.Fatalf("waits %d migrations %d, want %d", waits, migrations, tt.wantCalls)
			}
		})
	}
}

// unreadableARState is a StateDB whose alloc runner states cannot be read.
type unreadableARState struct{ state.StateDB }

func (unreadableARState) GetAllocRunnerState(string) (*state.AllocRunnerLocalState, error) {
	return nil, errors.New("undecodable value")
}

// TestRestoreWithUnreadableRunnerState: the runner's own state is
// optional; when it cannot be read the allocation is restored anyway.
func TestRestoreWithUnreadableRunnerState(t *testing.T) {
	alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{}))
	ar := newStateRunner(t, alloc, unreadableARState{state.NewMemDB()}, nil)
	if err := ar.Restore(); err != nil {
		t.Fatalf("Restore = %v, want nil", err)
	}
	closed := state.NewMemDB()
	ar = newStateRunner(t, alloc, closed, nil)
	_ = closed.Close()
	if err := ar.Restore(); !errors.Is(err, state.ErrClosed) {
		t.Fatalf("Restore on a closed db = %v, want ErrClosed", err)
	}
}
