package state

import (
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

func testARState() *AllocRunnerLocalState {
	healthy := true
	return &AllocRunnerLocalState{
		Version:      AllocRunnerStateVersion,
		DeploymentID: "d1",
		DeploymentStatus: &structs.AllocDeploymentStatus{
			Healthy:   &healthy,
			Timestamp: fixedTime(200),
			Canary:    true,
		},
		PrevAllocMigrated: true,
	}
}

func testAllocRunnerState(t *testing.T, db StateDB) {
	got, err := db.GetAllocRunnerState("a1")
	mustNil(t, err)
	if got != nil {
		t.Fatalf("state of an unknown alloc = %+v, want nil", got)
	}

	// Stored apart from the alloc: written before it, it does not make
	// an allocation appear.
	in := testARState()
	mustNil(t, db.PutAllocRunnerState("a1", in))
	if allocs := sortedAllocs(t, db); len(allocs) != 0 {
		t.Fatalf("allocs = %v, want none", allocIDs(allocs))
	}
	*in.DeploymentStatus.Healthy = false
	in.PrevAllocMigrated = false
	got, err = db.GetAllocRunnerState("a1")
	mustNil(t, err)
	if !reflect.DeepEqual(got, testARState()) {
		t.Fatalf("got %+v, want %+v (changed through the caller's value?)", got, testARState())
	}
	*got.DeploymentStatus.Healthy = false
	if again, _ := db.GetAllocRunnerState("a1"); !again.Equal(testARState()) {
		t.Fatalf("stored state changed through the returned value: %+v", again)
	}

	// Replace.
	next := &AllocRunnerLocalState{Version: AllocRunnerStateVersion, PrevAllocMigrated: true}
	mustNil(t, db.PutAllocRunnerState("a1", next))
	if got, _ = db.GetAllocRunnerState("a1"); !reflect.DeepEqual(got, next) {
		t.Fatalf("after replace = %+v, want %+v", got, next)
	}

	// Deleting the allocation deletes it, and leaves others alone.
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	mustNil(t, db.PutAllocRunnerState("a2", testARState()))
	mustNil(t, db.DeleteAllocationBucket("a1"))
	if got, _ = db.GetAllocRunnerState("a1"); got != nil {
		t.Fatalf("after delete = %+v, want nil", got)
	}
	if got, _ = db.GetAllocRunnerState("a2"); !reflect.DeepEqual(got, testARState()) {
		t.Fatalf("a2 = %+v", got)
	}

	if err := db.PutAllocRunnerState("", testARState()); structs.KindOf(err) != structs.KindOf(structs.Invalid("x")) {
		t.Fatalf("empty alloc ID: err = %v, want invalid", err)
	}
	mustNil(t, db.Close())
	if _, err := db.GetAllocRunnerState("a2"); err != ErrClosed {
		t.Fatalf("get after close: err = %v", err)
	}
	if err := db.PutAllocRunnerState("a2", testARState()); err != ErrClosed {
		t.Fatalf("put after close: err = %v", err)
	}
}

func testAllocRunnerStateUnsetIsNotZero(t *testing.T, db StateDB) {
	undecided := &AllocRunnerLocalState{Version: 1, DeploymentID: "d", DeploymentStatus: &structs.AllocDeploymentStatus{Timestamp: fixedTime(1)}}
	unhealthy := testARState()
	*unhealthy.DeploymentStatus.Healthy = false
	cases := map[string]*AllocRunnerLocalState{
		"zero":      {},
		"undecided": undecided,
		"unhealthy": unhealthy,
		"full":      testARState(),
	}
	for name, s := range cases {
		mustNil(t, db.PutAllocRunnerState(name, s))
	}
	for name, want := range cases {
		got, err := db.GetAllocRunnerState(name)
		mustNil(t, err)
		if !reflect.DeepEqual(got, want) || !got.Equal(want) {
			t.Errorf("%s: got %#v, want %#v", name, got, want)
		}
		if got.DeploymentStatus != nil && (got.DeploymentStatus.Healthy == nil) != (want.DeploymentStatus.Healthy == nil) {
			t.Errorf("%s: Healthy nil-ness changed", name)
		}
	}
}

func testHookStates(t *testing.T, db StateDB) {
	ls := testLocalState()
	ls.HookState = map[string]*HookState{
		"devices":  {Data: map[string]string{"reservations": `[{"a":1}]`}},
		"task_dir": {Done: true},
	}
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", ls))
	ls.HookState["devices"].Data["reservations"] = "changed"
	ls.HookState["task_dir"].Done = false
	ls.HookState["new"] = &HookState{}
	want := testLocalState()
	want.HookState = map[string]*HookState{
		"devices":  {Data: map[string]string{"reservations": `[{"a":1}]`}},
		"task_dir": {Done: true},
	}
	got, _, err := db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if !reflect.DeepEqual(got, want) || !got.Equal(want) {
		t.Fatalf("got %+v, want %+v (changed through the caller's value?)", got.HookState, want.HookState)
	}
	got.HookState["devices"].Data["reservations"] = "x"
	delete(got.HookState, "task_dir")
	if again, _, _ := db.GetTaskRunnerState("a1", "web"); !again.Equal(want) {
		t.Fatalf("stored hook state changed through the returned value: %+v", again.HookState)
	}
}

func TestHookStateEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b *LocalState
		want bool
	}{
		{"both nil maps", &LocalState{}, &LocalState{}, true},
		{"nil vs empty map", &LocalState{}, &LocalState{HookState: map[string]*HookState{}}, false},
		{"nil vs empty data", &LocalState{HookState: map[string]*HookState{"h": {}}}, &LocalState{HookState: map[string]*HookState{"h": {Data: map[string]string{}}}}, false},
		{"done differs", &LocalState{HookState: map[string]*HookState{"h": {Done: true}}}, &LocalState{HookState: map[string]*HookState{"h": {}}}, false},
		{"other hook", &LocalState{HookState: map[string]*HookState{"h": {}}}, &LocalState{HookState: map[string]*HookState{"g": {}}}, false},
		{"same", &LocalState{HookState: map[string]*HookState{"h": {Data: map[string]string{"k": "v"}}}}, &LocalState{HookState: map[string]*HookState{"h": {Data: map[string]string{"k": "v"}}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Equal(tc.b); got != tc.want {
				t.Fatalf("Equal = %v, want %v", got, tc.want)
			}
			if got := tc.a.Equal(tc.a.Copy()); !got {
				t.Fatal("a value differs from its copy")
			}
		})
	}
}

// TestBoltAllocRunnerAndHookStatesPersist reopens the file and reads back
// the alloc runner's state and the hooks' states.
func TestBoltAllocRunnerAndHookStatesPersist(t *testing.T) {
	dir := t.TempDir()
	db := openTestBolt(t, dir)
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	mustNil(t, db.PutAllocRunnerState("a1", testARState()))
	ls := testLocalState()
	ls.HookState = map[string]*HookState{"devices": {Data: map[string]string{"k": "v"}}, "task_dir": {Done: true}, "empty": {Data: map[string]string{}}}
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", ls))
	mustNil(t, db.Close())

	db = openTestBolt(t, dir)
	got, err := db.GetAllocRunnerState("a1")
	mustNil(t, err)
	if !reflect.DeepEqual(got, testARState()) {
		t.Errorf("alloc runner state = %+v, want %+v", got, testARState())
	}
	gotLS, _, err := db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if !reflect.DeepEqual(gotLS, ls) {
		t.Errorf("hook states = %+v, want %+v", gotLS.HookState, ls.HookState)
	}
	if ids := allocIDs(sortedAllocs(t, db)); !reflect.DeepEqual(ids, []string{"a1"}) {
		t.Errorf("allocs = %v", ids)
	}
}

// TestBoltReadsValuesWrittenBeforeHookAndRunnerState reads a schema
// version 2 file written before the alloc runner state and the hook states
// existed: no alloc_runner key, and local states without HookState.
func TestBoltReadsValuesWrittenBeforeHookAndRunnerState(t *testing.T) {
	dir := t.TempDir()
	db := openTestBolt(t, dir)
	mustNil(t, db.PutAllocation(testAlloc("a1")))
	old := []byte(`{"InvocationID":"inv1","TaskHandle":null}`)
	err := db.db.Update(func(tx *bolt.Tx) error {
		ab, err := allocBucket(tx, "a1")
		if err != nil {
			return err
		}
		tb, err := ab.CreateBucketIfNotExists(taskBucketName("web"))
		if err != nil {
			return err
		}
		return tb.Put(localStateKey, old)
	})
	mustNil(t, err)
	mustNil(t, db.Close())

	db = openTestBolt(t, dir)
	ars, err := db.GetAllocRunnerState("a1")
	mustNil(t, err)
	if ars != nil {
		t.Errorf("alloc runner state = %+v, want nil", ars)
	}
	ls, _, err := db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if want := (&LocalState{InvocationID: "inv1"}); !reflect.DeepEqual(ls, want) {
		t.Errorf("local state = %#v, want %#v", ls, want)
	}
}
