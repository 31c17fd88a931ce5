package state

import (
	"errors"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func TestMemDBCopies(t *testing.T) {
	db := NewMemDB()
	alloc := &structs.Allocation{ID: "a1", ClientStatus: structs.AllocClientStatusPending}
	if err := db.PutAllocation(alloc); err != nil {
		t.Fatal(err)
	}
	got, errs, err := db.GetAllAllocations()
	if err != nil || len(errs) != 0 || len(got) != 1 {
		t.Fatalf("GetAllAllocations = %v, %v, %v", got, errs, err)
	}
	got[0].ClientStatus = "x"
	again, _, _ := db.GetAllAllocations()
	if again[0].ClientStatus != structs.AllocClientStatusPending {
		t.Errorf("stored alloc changed through returned pointer")
	}

	ls := &LocalState{InvocationID: "inv", TaskHandle: &drivers.TaskHandle{
		Version: 1, DriverState: []byte("abc"), Config: &drivers.TaskConfig{ID: "a1/web/inv", Env: map[string]string{"A": "1"}},
	}}
	ts := structs.NewTaskState()
	if err := db.PutTaskRunnerLocalState("a1", "web", ls); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTaskState("a1", "web", ts); err != nil {
		t.Fatal(err)
	}
	// The handle is immutable and shared (LocalState.Copy); the local
	// state's own fields are copied.
	ls.InvocationID, ls.TaskHandle = "changed", nil
	ts.State = structs.TaskStateDead
	gotLS, gotTS, err := db.GetTaskRunnerState("a1", "web")
	if err != nil {
		t.Fatal(err)
	}
	if gotLS.InvocationID != "inv" || gotLS.TaskHandle == nil || string(gotLS.TaskHandle.DriverState) != "abc" {
		t.Errorf("local state not copied: %+v", gotLS)
	}
	if gotTS.State != structs.TaskStatePending {
		t.Errorf("task state not copied: %q", gotTS.State)
	}

	if err := db.DeleteAllocationBucket("a1"); err != nil {
		t.Fatal(err)
	}
	gotLS, gotTS, err = db.GetTaskRunnerState("a1", "web")
	if err != nil || gotLS != nil || gotTS != nil {
		t.Errorf("after delete: %v %v %v", gotLS, gotTS, err)
	}
}

func TestMemDBNodeIdentityAndClose(t *testing.T) {
	db := NewMemDB()
	id, err := db.GetNodeIdentity()
	if err != nil || id.ID != "" {
		t.Fatalf("empty identity = %+v, %v", id, err)
	}
	if err := db.PutNodeIdentity(&NodeIdentity{ID: "n1", SecretID: "s1"}); err != nil {
		t.Fatal(err)
	}
	id, err = db.GetNodeIdentity()
	if err != nil || id.ID != "n1" || id.SecretID != "s1" {
		t.Fatalf("identity = %+v, %v", id, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetNodeIdentity(); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

// TestMemDBPutAllocationShares: the in-memory state keeps the (immutable)
// allocation it is given instead of a copy of its own.
func TestMemDBPutAllocationShares(t *testing.T) {
	db := NewMemDB()
	alloc := &structs.Allocation{ID: "a1", TaskResources: map[string]*structs.Resources{"web": {CPU: 100}},
		TaskStates: map[string]*structs.TaskState{"web": structs.NewTaskState()}}
	if err := db.PutAllocation(alloc); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := db.PutAllocation(alloc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("PutAllocation allocates %v times, want 0 (no copy)", n)
	}
}
