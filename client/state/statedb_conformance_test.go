package state

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// stateDBImpls are the implementations every conformance test runs on.
func stateDBImpls() []struct {
	name string
	open func(t *testing.T) StateDB
} {
	return []struct {
		name string
		open func(t *testing.T) StateDB
	}{
		{"memdb", func(t *testing.T) StateDB {
			db := NewMemDB()
			t.Cleanup(func() { _ = db.Close() })
			return db
		}},
		{"boltdb", func(t *testing.T) StateDB {
			db, err := NewBoltStateDB(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		}},
	}
}

// TestStateDBConformance runs the StateDB contract on every implementation.
func TestStateDBConformance(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, db StateDB)
	}{
		{"allocations put get replace delete", testAllocations},
		{"task state put get delete", testTaskStates},
		{"delete alloc deletes its tasks", testDeleteAllocDeletesTasks},
		{"node identity", testNodeIdentity},
		{"node meta", testNodeMeta},
		{"values are copied in and out", testCopies},
		{"unset is not zero", testUnsetIsNotZero},
		{"invalid input", testInvalidInput},
		{"concurrent writers", testConcurrentWriters},
		{"use after close fails", testUseAfterClose},
		{"driver plugin states", testDriverPluginStates},
		{"device plugin states", testDevicePluginStates},
		{"driver and device plugin states apart", testPluginKindsApart},
		{"alloc runner state", testAllocRunnerState},
		{"alloc runner state unset is not zero", testAllocRunnerStateUnsetIsNotZero},
		{"task hook states", testHookStates},
	}
	for _, impl := range stateDBImpls() {
		t.Run(impl.name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					tc.run(t, impl.open(t))
				})
			}
		})
	}
}

// fixedTime returns a wall-clock time without monotonic reading or zone,
// the form a JSON round trip returns.
func fixedTime(sec int64) time.Time { return time.Unix(sec, 1234).UTC() }

func testAlloc(id string) *structs.Allocation {
	return &structs.Allocation{
		ID:            id,
		Namespace:     "default",
		Name:          "web.api[0]",
		JobID:         "web",
		TaskGroup:     "api",
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		Job: &structs.Job{
			ID:   "web",
			Name: "web",
			Type: structs.JobTypeService,
		},
		TaskResources:        map[string]*structs.Resources{"web": {CPU: 100, MemoryMB: 64}},
		PreemptedAllocations: []string{"old"},
		CreateIndex:          7,
		AllocModifyIndex:     9,
	}
}

func testTaskState() *structs.TaskState {
	return &structs.TaskState{
		State:       structs.TaskStateRunning,
		Restarts:    2,
		LastRestart: fixedTime(100),
		StartedAt:   fixedTime(90),
		Events: []*structs.TaskEvent{
			{Type: structs.TaskStarted, Time: 5, Details: map[string]string{"k": "v"}},
		},
	}
}

func testLocalState() *LocalState {
	return &LocalState{
		InvocationID: "inv1",
		TaskHandle: &drivers.TaskHandle{
			Version:     1,
			State:       "running",
			DriverState: []byte(`{"pid":42}`),
			Config: &drivers.TaskConfig{
				ID:        "a1/web/inv1",
				Name:      "web",
				AllocID:   "a1",
				Env:       map[string]string{"A": "1"},
				Resources: &drivers.Resources{CPUShares: 100, MemoryMB: 64},
				RawConfig: []byte(`{"command":"/bin/sleep"}`),
			},
		},
	}
}

func sortedAllocs(t *testing.T, db StateDB) []*structs.Allocation {
	t.Helper()
	allocs, errs, err := db.GetAllAllocations()
	if err != nil {
		t.Fatalf("GetAllAllocations: %v", err)
	}
	if len(errs) != 0 {
		t.Fatalf("GetAllAllocations errs: %v", errs)
	}
	slices.SortFunc(allocs, func(a, b *structs.Allocation) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return allocs
}

func allocIDs(allocs []*structs.Allocation) []string {
	ids := make([]string, 0, len(allocs))
	for _, a := range allocs {
		ids = append(ids, a.ID)
	}
	return ids
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testAllocations(t *testing.T, db StateDB) {
	if got := sortedAllocs(t, db); len(got) != 0 {
		t.Fatalf("new db has allocations %v", allocIDs(got))
	}
	for _, id := range []string{"b", "a", "c"} {
		mustNil(t, db.PutAllocation(testAlloc(id)))
	}
	got := sortedAllocs(t, db)
	if ids := allocIDs(got); !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("ids = %v", ids)
	}
	if want := testAlloc("a"); !reflect.DeepEqual(got[0], want) {
		t.Errorf("alloc a = %+v, want %+v", got[0], want)
	}

	replaced := testAlloc("b")
	replaced.ClientStatus = structs.AllocClientStatusRunning
	replaced.AllocModifyIndex = 10
	mustNil(t, db.PutAllocation(replaced))
	got = sortedAllocs(t, db)
	if !reflect.DeepEqual(got[1], replaced) {
		t.Errorf("replaced alloc = %+v, want %+v", got[1], replaced)
	}

	mustNil(t, db.DeleteAllocationBucket("b"))
	mustNil(t, db.DeleteAllocationBucket("never-stored"))
	if ids := allocIDs(sortedAllocs(t, db)); !slices.Equal(ids, []string{"a", "c"}) {
		t.Fatalf("after delete ids = %v", ids)
	}
}

func testTaskStates(t *testing.T, db StateDB) {
	ls, ts, err := db.GetTaskRunnerState("a1", "web")
	if err != nil || ls != nil || ts != nil {
		t.Fatalf("empty: %v %v %v", ls, ts, err)
	}
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	ls, ts, err = db.GetTaskRunnerState("a1", "web")
	if err != nil || ls != nil || !reflect.DeepEqual(ts, testTaskState()) {
		t.Fatalf("task state only: ls=%v ts=%+v err=%v", ls, ts, err)
	}
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", testLocalState()))
	mustNil(t, db.PutTaskRunnerLocalState("a1", "sidecar", &LocalState{InvocationID: "inv2"}))
	ls, ts, err = db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if !reflect.DeepEqual(ls, testLocalState()) {
		t.Errorf("local state = %+v, want %+v", ls, testLocalState())
	}
	if !reflect.DeepEqual(ts, testTaskState()) {
		t.Errorf("task state = %+v", ts)
	}

	// Replace, then write the same value again.
	dead := testTaskState()
	dead.State = structs.TaskStateDead
	dead.FinishedAt = fixedTime(200)
	for range 2 {
		mustNil(t, db.PutTaskState("a1", "web", dead))
	}
	if _, ts, _ = db.GetTaskRunnerState("a1", "web"); !reflect.DeepEqual(ts, dead) {
		t.Errorf("replaced task state = %+v", ts)
	}
	// Back to an earlier value: must not be skipped as "unchanged".
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	if _, ts, _ = db.GetTaskRunnerState("a1", "web"); !reflect.DeepEqual(ts, testTaskState()) {
		t.Errorf("task state after A-B-A = %+v", ts)
	}

	mustNil(t, db.DeleteTaskBucket("a1", "web"))
	mustNil(t, db.DeleteTaskBucket("a1", "never"))
	mustNil(t, db.DeleteTaskBucket("never", "web"))
	if ls, ts, err = db.GetTaskRunnerState("a1", "web"); err != nil || ls != nil || ts != nil {
		t.Errorf("after delete: %v %v %v", ls, ts, err)
	}
	if ls, _, err = db.GetTaskRunnerState("a1", "sidecar"); err != nil || ls == nil || ls.InvocationID != "inv2" {
		t.Errorf("sibling task after delete: %v %v", ls, err)
	}
	// Writing after a delete stores again (a stale "unchanged" would skip it).
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	if _, ts, _ = db.GetTaskRunnerState("a1", "web"); !reflect.DeepEqual(ts, testTaskState()) {
		t.Errorf("task state rewritten after delete = %+v", ts)
	}
}

func testDeleteAllocDeletesTasks(t *testing.T, db StateDB) {
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", testLocalState()))
	mustNil(t, db.PutTaskState("a2", "web", testTaskState()))
	mustNil(t, db.DeleteAllocationBucket("a1"))
	if ls, ts, err := db.GetTaskRunnerState("a1", "web"); err != nil || ls != nil || ts != nil {
		t.Errorf("task of deleted alloc: %v %v %v", ls, ts, err)
	}
	if _, ts, err := db.GetTaskRunnerState("a2", "web"); err != nil || ts == nil {
		t.Errorf("task of other alloc: %v %v", ts, err)
	}
	// Re-putting identical values after the delete must store them.
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	if ids := allocIDs(sortedAllocs(t, db)); !slices.Equal(ids, []string{"a1"}) {
		t.Errorf("ids after re-put = %v", ids)
	}
	if _, ts, err := db.GetTaskRunnerState("a1", "web"); err != nil || ts == nil {
		t.Errorf("task state after re-put: %v %v", ts, err)
	}
}

func testNodeIdentity(t *testing.T, db StateDB) {
	id, err := db.GetNodeIdentity()
	if err != nil || id == nil || *id != (NodeIdentity{}) {
		t.Fatalf("empty identity = %+v, %v", id, err)
	}
	mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "n1", SecretID: "s1"}))
	mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "n1", SecretID: "s2"}))
	id, err = db.GetNodeIdentity()
	if err != nil || *id != (NodeIdentity{ID: "n1", SecretID: "s2"}) {
		t.Fatalf("identity = %+v, %v", id, err)
	}
}

func testCopies(t *testing.T, db StateDB) {
	// PutAllocation's caller hands the alloc over (it must not change it
	// afterwards); what reads return is the reader's own.
	alloc := testAlloc("a1")
	mustNil(t, db.PutAllocation(alloc))
	got := sortedAllocs(t, db)
	if !reflect.DeepEqual(got[0], testAlloc("a1")) {
		t.Fatalf("stored alloc = %+v", got[0])
	}
	got[0].ClientStatus = "x"
	got[0].TaskResources["web"].CPU = 2
	got[0].PreemptedAllocations[0] = "y"
	if again := sortedAllocs(t, db); !reflect.DeepEqual(again[0], testAlloc("a1")) {
		t.Fatalf("stored alloc changed through returned value: %+v", again[0])
	}

	ls, ts := testLocalState(), testTaskState()
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", ls))
	mustNil(t, db.PutTaskState("a1", "web", ts))
	// Task handles are immutable and shared by their holders (see
	// LocalState.Copy): only the local state's own fields are isolated.
	ls.InvocationID = "x"
	ls.TaskHandle = nil
	ts.State = structs.TaskStateDead
	ts.Events[0] = nil
	gotLS, gotTS, err := db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if !reflect.DeepEqual(gotLS, testLocalState()) || !reflect.DeepEqual(gotTS, testTaskState()) {
		t.Fatalf("stored task values changed through caller's values: %+v %+v", gotLS, gotTS)
	}
	gotLS.InvocationID = "y"
	gotLS.TaskHandle = nil
	gotTS.Restarts = 99
	gotTS.Events = nil
	gotLS, gotTS, _ = db.GetTaskRunnerState("a1", "web")
	if !reflect.DeepEqual(gotLS, testLocalState()) || !reflect.DeepEqual(gotTS, testTaskState()) {
		t.Fatalf("stored task values changed through returned values: %+v %+v", gotLS, gotTS)
	}

	id := &NodeIdentity{ID: "n1", SecretID: "s1"}
	mustNil(t, db.PutNodeIdentity(id))
	id.SecretID = "changed"
	gotID, _ := db.GetNodeIdentity()
	gotID.ID = "changed"
	if again, _ := db.GetNodeIdentity(); *again != (NodeIdentity{ID: "n1", SecretID: "s1"}) {
		t.Fatalf("stored identity changed: %+v", again)
	}
}

func testUnsetIsNotZero(t *testing.T, db StateDB) {
	localStates := map[string]*LocalState{
		"nil-handle":     {InvocationID: "i1"},
		"zero-handle":    {InvocationID: "i2", TaskHandle: &drivers.TaskHandle{}},
		"empty-fields":   {InvocationID: "i3", TaskHandle: &drivers.TaskHandle{DriverState: []byte{}, Config: &drivers.TaskConfig{Env: map[string]string{}}}},
		"nil-fields":     {InvocationID: "i4", TaskHandle: &drivers.TaskHandle{Config: &drivers.TaskConfig{}}},
		"empty-hooks":    {InvocationID: "i5", HookState: map[string]*HookState{}},
		"hook-data":      {InvocationID: "i6", HookState: map[string]*HookState{"nil": {}, "empty": {Data: map[string]string{}}, "done": {Done: true, Data: map[string]string{"k": ""}}}},
		"full":           testLocalState(),
		"start-intent":   {InvocationID: "i7", StartIntent: &drivers.TaskConfig{ID: "a1/web/i7", Name: "web", Env: map[string]string{}, RawConfig: []byte(`{"a":1}`)}},
		"nil-raw-intent": {InvocationID: "i8", StartIntent: &drivers.TaskConfig{ID: "a1/web/i8"}},
	}
	taskStates := map[string]*structs.TaskState{
		"zero":         {},
		"empty-events": {Events: []*structs.TaskEvent{}},
		"false-values": {State: structs.TaskStateDead, Failed: false, Restarts: 0, Events: []*structs.TaskEvent{{Details: map[string]string{}}}},
		"full":         testTaskState(),
	}
	for name, ls := range localStates {
		mustNil(t, db.PutTaskRunnerLocalState("a1", name, ls))
	}
	for name, ts := range taskStates {
		mustNil(t, db.PutTaskState("a2", name, ts))
	}
	for name, want := range localStates {
		got, ts, err := db.GetTaskRunnerState("a1", name)
		mustNil(t, err)
		if ts != nil {
			t.Errorf("%s: task state %+v was never put", name, ts)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: local state = %#v, want %#v", name, got, want)
		}
		if got.TaskHandle != nil && got.TaskHandle.Config != nil {
			if (got.TaskHandle.Config.Env == nil) != (want.TaskHandle.Config.Env == nil) {
				t.Errorf("%s: Env nil-ness changed", name)
			}
		}
	}
	for name, want := range taskStates {
		ls, got, err := db.GetTaskRunnerState("a2", name)
		mustNil(t, err)
		if ls != nil {
			t.Errorf("%s: local state %+v was never put", name, ls)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: task state = %#v, want %#v", name, got, want)
		}
		if (got.Events == nil) != (want.Events == nil) {
			t.Errorf("%s: Events nil-ness changed: got %#v", name, got.Events)
		}
	}

	emptySlices := testAlloc("empty")
	emptySlices.PreemptedAllocations = []string{}
	emptySlices.TaskStates = map[string]*structs.TaskState{}
	nilSlices := testAlloc("nil")
	nilSlices.PreemptedAllocations = nil
	nilSlices.TaskResources = nil
	mustNil(t, db.PutAllocation(emptySlices))
	mustNil(t, db.PutAllocation(nilSlices))
	got := sortedAllocs(t, db)
	if !reflect.DeepEqual(got[0], emptySlices) || got[0].PreemptedAllocations == nil || got[0].TaskStates == nil {
		t.Errorf("empty slices = %#v", got[0])
	}
	if !reflect.DeepEqual(got[1], nilSlices) || got[1].PreemptedAllocations != nil || got[1].TaskStates != nil {
		t.Errorf("nil slices = %#v", got[1])
	}
}

func testInvalidInput(t *testing.T, db StateDB) {
	if err := db.PutAllocation(nil); structs.KindOf(err) != structs.KindOf(structs.Invalid("x")) {
		t.Errorf("PutAllocation(nil) = %v, want invalid", err)
	}
	if err := db.PutAllocation(&structs.Allocation{}); err == nil {
		t.Error("PutAllocation without ID succeeded")
	}
	if err := db.PutNodeIdentity(nil); err == nil {
		t.Error("PutNodeIdentity(nil) succeeded")
	}
}

func testConcurrentWriters(t *testing.T, db StateDB) {
	const allocs, tasks = 10, 3
	var wg sync.WaitGroup
	errs := make(chan error, allocs*tasks)
	for a := range allocs {
		for k := range tasks {
			wg.Go(func() {
				id, task := fmt.Sprintf("alloc-%d", a), fmt.Sprintf("task-%d", k)
				for i := range 3 {
					ts := testTaskState()
					ts.Restarts = uint64(i)
					if err := db.PutTaskState(id, task, ts); err != nil {
						errs <- err
						return
					}
				}
				if err := db.PutTaskRunnerLocalState(id, task, &LocalState{InvocationID: task}); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for a := range allocs {
		for k := range tasks {
			ls, ts, err := db.GetTaskRunnerState(fmt.Sprintf("alloc-%d", a), fmt.Sprintf("task-%d", k))
			if err != nil || ls == nil || ts == nil || ts.Restarts != 2 || ls.InvocationID != fmt.Sprintf("task-%d", k) {
				t.Fatalf("alloc-%d/task-%d: %+v %+v %v", a, k, ls, ts, err)
			}
		}
	}
}

func testUseAfterClose(t *testing.T, db StateDB) {
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	mustNil(t, db.Close())
	calls := map[string]func() error{
		"GetAllAllocations": func() error { _, _, err := db.GetAllAllocations(); return err },
		"PutAllocation":     func() error { return db.PutAllocation(testAlloc("a2")) },
		// The same value as before Close: the unchanged-value shortcut
		// must not hide that the database is closed.
		"PutAllocation same":      func() error { return db.PutAllocation(testAlloc("a1")) },
		"DeleteAllocationBucket":  func() error { return db.DeleteAllocationBucket("a1") },
		"GetTaskRunnerState":      func() error { _, _, err := db.GetTaskRunnerState("a1", "web"); return err },
		"PutTaskRunnerLocalState": func() error { return db.PutTaskRunnerLocalState("a1", "web", testLocalState()) },
		"PutTaskState":            func() error { return db.PutTaskState("a1", "web", testTaskState()) },
		"DeleteTaskBucket":        func() error { return db.DeleteTaskBucket("a1", "web") },
		"GetNodeIdentity":         func() error { _, err := db.GetNodeIdentity(); return err },
		"PutNodeIdentity":         func() error { return db.PutNodeIdentity(&NodeIdentity{ID: "n"}) },
		"GetNodeMeta":             func() error { _, err := db.GetNodeMeta(); return err },
		"PutNodeMeta":             func() error { return db.PutNodeMeta(nil) },
		"GetDriverPluginStates":   func() error { _, err := db.GetDriverPluginStates(); return err },
		"PutDriverPluginState":    func() error { return db.PutDriverPluginState("p", []byte(`{}`)) },
		"DeleteDriverPluginState": func() error { return db.DeleteDriverPluginState("p") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", name, err)
		}
	}
}
