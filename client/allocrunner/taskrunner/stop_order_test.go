package taskrunner

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/structs"
)

// slowDestroy is the mock driver whose DestroyTask waits for release, as
// a shim-based driver's waits for the shim to exit and removes its state.
type slowDestroy struct {
	*mock.Driver
	entered chan struct{}
	release chan struct{}
}

func (d *slowDestroy) DestroyTask(ctx context.Context, id string, force bool) error {
	close(d.entered)
	<-d.release
	return d.Driver.DestroyTask(ctx, id, force)
}

// TestTaskRunnerReportsAKilledTaskDeadBeforeReleasingIt: a stopped task is
// dead once its exit is recorded; its state (and so the allocation's
// client status) must not wait for the driver to clean up after it.
func TestTaskRunnerReportsAKilledTaskDeadBeforeReleasingIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := &slowDestroy{Driver: mock.New(nil), entered: make(chan struct{}), release: make(chan struct{})}
		t.Cleanup(driver.Shutdown)
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{"run_for": "1h"}})
		dir := allocdir.New(t.TempDir(), alloc.ID)
		if err := dir.Build(); err != nil {
			t.Fatal(err)
		}
		db := state.NewMemDB()
		tr, err := New(&Config{
			Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: driver, StateDB: db,
			Node: &structs.Node{ID: "node1", Datacenter: "dc1"}, KillGrace: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		go tr.Run()
		waitState(t, tr, "the task running", isRunning)
		tr.RequestKill(structs.NewTaskEvent(structs.TaskKilling))
		waitClosed(t, "DestroyTask", driver.entered)
		waitState(t, tr, "the task dead while the driver releases it", func(st *structs.TaskState) bool {
			return st.State == structs.TaskStateDead
		})
		if got, want := eventTypes(tr.TaskState()), []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if _, ts, err := db.GetTaskRunnerState(alloc.ID, tr.Name()); err != nil || ts == nil || ts.State != structs.TaskStateDead {
			t.Errorf("persisted task state = %+v, %v; want dead (persisted before it is reported)", ts, err)
		}
		select {
		case <-tr.WaitCh():
			t.Fatal("Run returned before the driver released the task")
		default:
		}
		close(driver.release)
		waitClosed(t, "Run to return", tr.WaitCh())
		if ls, _, _ := db.GetTaskRunnerState(alloc.ID, tr.Name()); ls == nil || ls.TaskHandle != nil {
			t.Errorf("local state = %+v: the handle must be cleared once released", ls)
		}
	})
}
