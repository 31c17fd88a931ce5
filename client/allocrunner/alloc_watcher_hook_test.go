package allocrunner

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// newRunner returns a runner of alloc sharing root and driver with others,
// with the given watchers.
func newRunner(t *testing.T, alloc *structs.Allocation, root string, driver *mock.Driver, rec StateUpdater, prev, preempted PrevAllocWatcher) *AllocRunner {
	t.Helper()
	ar, err := New(&Config{
		Alloc:        alloc,
		AllocDirRoot: root,
		StateDB:      state.NewMemDB(),
		Drivers: func(name string) (drivers.DriverPlugin, error) {
			return driver, nil
		},
		StateUpdater:          rec,
		Node:                  &structs.Node{ID: "node1", Datacenter: "dc1"},
		KillGrace:             200 * time.Millisecond,
		PrevAllocWatcher:      prev,
		PreemptedAllocWatcher: preempted,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ar.Destroy)
	return ar
}

func stopped(a *structs.Allocation) *structs.Allocation {
	c := a.Copy()
	c.DesiredStatus = structs.AllocDesiredStatusStop
	c.AllocModifyIndex++
	return c
}

// firstEvent returns the time of the task's first event after Received
// (which its runner records when it is created).
func firstEvent(st *structs.TaskState) time.Time {
	for _, e := range st.Events {
		if e.Type != structs.TaskReceived {
			return time.Unix(0, e.Time)
		}
	}
	return time.Time{}
}

func lastEvent(st *structs.TaskState) time.Time {
	return time.Unix(0, st.Events[len(st.Events)-1].Time)
}

func TestAllocWatcherHookWaitsForPreviousAndMigrates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		t.Cleanup(driver.Shutdown)
		root := t.TempDir()
		disk := &structs.EphemeralDisk{Sticky: true, Migrate: true, SizeMB: 10}

		oldAlloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"kill_after": "20ms"}))
		oldAlloc.Job.TaskGroups[0].EphemeralDisk = disk
		old := newRunner(t, oldAlloc, root, driver, &recorder{}, nil, nil)
		go old.Run()
		waitChange(t, old, "old alloc running", isRunning(old))
		// What the old task wrote.
		if err := os.WriteFile(filepath.Join(old.AllocDir().SharedDir, "data", "db.txt"), []byte("state"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old.AllocDir().AllocDir, "web", "local", "cache"), []byte("warm"), 0o644); err != nil {
			t.Fatal(err)
		}

		newAlloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		newAlloc.Job.TaskGroups[0].EphemeralDisk = disk
		newAlloc.PreviousAllocation = oldAlloc.ID
		watcher := allocwatcher.NewAllocWatcher(allocwatcher.Config{Alloc: newAlloc, PreviousRunner: old.WatchedRunner()})
		rec := &recorder{}
		ar := newRunner(t, newAlloc, root, driver, rec, watcher, nil)
		go ar.Run()

		settle(t, "new alloc waiting", func() bool {
			u := rec.last()
			return u != nil && u.ClientDescription == DescWaitingPrevious && watcher.IsWaiting()
		})
		if st := ar.AllocState(); st.ClientStatus != structs.AllocClientStatusPending || st.ClientDescription != DescWaitingPrevious {
			t.Fatalf("waiting alloc state = %s %q", st.ClientStatus, st.ClientDescription)
		}
		if ts := ar.AllocState().TaskStates["web"]; ts.State != structs.TaskStatePending || !firstEvent(ts).IsZero() {
			t.Fatalf("task started before the previous alloc terminated: %+v", ts)
		}

		old.Update(stopped(oldAlloc))
		waitChange(t, ar, "new alloc running", isRunning(ar))

		oldLast := lastEvent(old.AllocState().TaskStates["web"])
		newFirst := firstEvent(ar.AllocState().TaskStates["web"])
		if newFirst.Before(oldLast) {
			t.Errorf("new task's first event %v is before the old task's last %v", newFirst, oldLast)
		}
		got, err := os.ReadFile(filepath.Join(ar.AllocDir().SharedDir, "data", "db.txt"))
		if err != nil || string(got) != "state" {
			t.Errorf("migrated data = %q, %v", got, err)
		}
		got, err = os.ReadFile(filepath.Join(ar.AllocDir().AllocDir, "web", "local", "cache"))
		if err != nil || string(got) != "warm" {
			t.Errorf("migrated local dir = %q, %v", got, err)
		}
		if st := ar.AllocState(); st.ClientDescription != DescRunning {
			t.Errorf("description = %q after waiting", st.ClientDescription)
		}
	})
}

func TestAllocWatcherHookWaitsForAllPreempted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		t.Cleanup(driver.Shutdown)
		root := t.TempDir()
		var victims []*AllocRunner
		runners := map[string]allocwatcher.AllocRunnerMeta{}
		var ids []string
		for range 3 {
			a := testAlloc(structs.JobTypeService, mockTask("low", map[string]any{"kill_after": "30ms"}))
			v := newRunner(t, a, root, driver, &recorder{}, nil, nil)
			go v.Run()
			victims = append(victims, v)
			runners[a.ID] = v.WatchedRunner()
			ids = append(ids, a.ID)
		}
		for _, v := range victims {
			waitChange(t, v, "victim running", isRunning(v))
		}
		big := testAlloc(structs.JobTypeService, mockTask("big", nil))
		big.PreemptedAllocations = ids
		watcher := allocwatcher.NewPreemptedAllocWatcher(allocwatcher.Config{Alloc: big, PreemptedRunners: runners})
		ar := newRunner(t, big, root, driver, &recorder{}, nil, watcher)
		go ar.Run()
		settle(t, "waiting for preempted", func() bool { return ar.AllocState().ClientDescription == DescWaitingPreempted })

		// Evicting all but one keeps it waiting.
		for _, v := range victims[:2] {
			e := v.Alloc().Copy()
			e.DesiredStatus = structs.AllocDesiredStatusEvict
			e.AllocModifyIndex++
			v.Update(e)
			waitClosed(t, "victim dead", v.WaitCh())
		}
		if !watcher.IsWaiting() || ar.AllocState().ClientStatus != structs.AllocClientStatusPending {
			t.Fatal("started before every preempted alloc terminated")
		}
		last := victims[2]
		last.Update(stopped(last.Alloc()))
		waitChange(t, ar, "preempting alloc running", isRunning(ar))
		started := firstEvent(ar.AllocState().TaskStates["big"])
		for _, v := range victims {
			if end := lastEvent(v.AllocState().TaskStates["low"]); started.Before(end) {
				t.Errorf("preempting task's first event %v before a victim's last %v", started, end)
			}
		}
	})
}

func TestAllocWatcherHookStopWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		t.Cleanup(driver.Shutdown)
		root := t.TempDir()
		oldAlloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		old := newRunner(t, oldAlloc, root, driver, &recorder{}, nil, nil)
		go old.Run()
		newAlloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		newAlloc.PreviousAllocation = oldAlloc.ID
		watcher := allocwatcher.NewAllocWatcher(allocwatcher.Config{Alloc: newAlloc, PreviousRunner: old.WatchedRunner()})
		ar := newRunner(t, newAlloc, root, driver, &recorder{}, watcher, nil)
		go ar.Run()
		settle(t, "waiting", watcher.IsWaiting)
		ar.Update(stopped(newAlloc))
		waitClosed(t, "stopped waiting alloc's Run", ar.WaitCh())
		st := ar.AllocState()
		if st.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("stopped while waiting: %s %q, want complete", st.ClientStatus, st.ClientDescription)
		}
		if ts := st.TaskStates["web"]; !ts.StartedAt.IsZero() {
			t.Errorf("task started: %+v", ts)
		}
	})
}

func TestAllocWatcherHookShutdownWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		t.Cleanup(driver.Shutdown)
		root := t.TempDir()
		oldAlloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		old := newRunner(t, oldAlloc, root, driver, &recorder{}, nil, nil)
		go old.Run()
		newAlloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		newAlloc.PreviousAllocation = oldAlloc.ID
		watcher := allocwatcher.NewAllocWatcher(allocwatcher.Config{Alloc: newAlloc, PreviousRunner: old.WatchedRunner()})
		ar := newRunner(t, newAlloc, root, driver, &recorder{}, watcher, nil)
		go ar.Run()
		settle(t, "waiting", watcher.IsWaiting)
		done := make(chan struct{})
		go func() { ar.Shutdown(); close(done) }()
		waitClosed(t, "shutdown of a waiting runner", done)
	})
}
