package server

import (
	"bytes"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// TestFSMPeriodicLaunchRecord: a periodic job registers without an
// evaluation and its registration time is its first launch record; a
// child's registration moves the record (never back); the record survives
// a snapshot and goes with a purge. A job that is not a template still
// needs its evaluation.
func TestFSMPeriodicLaunchRecord(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	registered := time.Date(2026, 1, 4, 15, 0, 10, 0, time.UTC)
	parent := periodicJob("report", "* * * * *", false)
	parent.Canonicalize()
	parent.SubmitTime = registered.UnixNano()
	applyCmd(t, f, 1, JobRegisterRequestType, &JobRegisterCommand{Job: parent})
	launchOf := func() time.Time {
		t.Helper()
		rec, err := f.State().PeriodicLaunchByID(nil, structs.DefaultNamespace, "report")
		if err != nil || rec == nil {
			t.Fatalf("launch record: %v %v", rec, err)
		}
		return rec.Launch
	}
	if got := launchOf(); !got.Equal(registered) {
		t.Fatalf("first launch record = %s, want the registration time %s", got, registered)
	}
	tick := time.Date(2026, 1, 4, 15, 1, 0, 0, time.UTC)
	child := periodicChild(parent, tick)
	applyCmd(t, f, 2, JobRegisterRequestType, &JobRegisterCommand{Job: child,
		Eval:           &structs.Evaluation{ID: "e1", Namespace: "default", JobID: child.ID, Status: structs.EvalStatusPending},
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: "default", ID: "report", Launch: tick}})
	older := periodicChild(parent, registered)
	applyCmd(t, f, 3, JobRegisterRequestType, &JobRegisterCommand{Job: older,
		Eval:           &structs.Evaluation{ID: "e2", Namespace: "default", JobID: older.ID, Status: structs.EvalStatusPending},
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: "default", ID: "report", Launch: registered}})
	if got := launchOf(); !got.Equal(tick) {
		t.Fatalf("launch record = %s, want %s (it never moves back)", got, tick)
	}
	if j, _ := f.State().JobByID(nil, "default", "report"); j == nil || j.Status != structs.JobStatusRunning {
		t.Errorf("periodic job status = %+v, want running", j)
	}

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	fresh, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	a, _ := f.State().PeriodicLaunches(nil)
	b, _ := fresh.State().PeriodicLaunches(nil)
	if len(a) != 1 || !reflect.DeepEqual(a, b) {
		t.Fatalf("launch records after restore = %+v, want %+v", b, a)
	}

	applyCmd(t, f, 4, JobDeregisterRequestType, &JobDeregisterCommand{Namespace: "default", JobID: "report", Purge: true,
		Eval: &structs.Evaluation{ID: "e3", Namespace: "default", JobID: "report", Status: structs.EvalStatusPending}})
	if rec, _ := f.State().PeriodicLaunchByID(nil, "default", "report"); rec != nil {
		t.Errorf("the purged job's launch record is left: %+v", rec)
	}

	plain := testJob("plain", 1, 100, 100)
	plain.Canonicalize()
	buf, err := encodeCommand(f.handle, JobRegisterRequestType, &JobRegisterCommand{Job: plain})
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: buf}); resp == nil {
		t.Error("a job that is not periodic or parameterized registered without an evaluation")
	}
}

// TestFSMRefusesSecondChildWithOneToken: the FSM registers at most one
// live child per parameterized job and idempotency token, whatever the
// endpoint saw.
func TestFSMRefusesSecondChildWithOneToken(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	parent := paramJob("p", "optional", nil, nil)
	parent.Canonicalize()
	applyCmd(t, f, 1, JobRegisterRequestType, &JobRegisterCommand{Job: parent})
	child := func(id string) *JobRegisterCommand {
		c := dispatchChild(parent, &structs.JobDispatchRequest{IdempotencyToken: "tok"}, time.Unix(100, 0))
		c.ID = id
		return &JobRegisterCommand{Job: c, Eval: &structs.Evaluation{ID: "e-" + id, Namespace: "default", JobID: id, Status: structs.EvalStatusPending}}
	}
	applyCmd(t, f, 2, JobRegisterRequestType, child("p/dispatch-100-aaaaaaaa"))
	buf, err := encodeCommand(f.handle, JobRegisterRequestType, child("p/dispatch-100-bbbbbbbb"))
	if err != nil {
		t.Fatal(err)
	}
	resp := f.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: buf})
	if err, ok := resp.(error); !ok || structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("second child with the token: %v, want a conflict", resp)
	}
	if j, _ := f.State().JobByID(nil, "default", "p/dispatch-100-bbbbbbbb"); j != nil {
		t.Error("the second child was registered")
	}
}
