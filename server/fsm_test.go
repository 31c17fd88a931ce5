package server

import (
	"bytes"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// recorder is an fsmObserver that records what it was told.
type recorder struct {
	evals    []*structs.Evaluation
	capacity []uint64
}

func (r *recorder) evalsUpserted(e []*structs.Evaluation) { r.evals = append(r.evals, e...) }
func (r *recorder) capacityChanged(i uint64)              { r.capacity = append(r.capacity, i) }
func (r *recorder) clusterMetaChanged()                   {}
func (r *recorder) applied()                              {}

// memSink is an in-memory raft.SnapshotSink.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func applyCmd(t *testing.T, f *FSM, index uint64, mt MessageType, cmd any) {
	t.Helper()
	buf, err := encodeCommand(f.handle, mt, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf}); resp != nil {
		t.Fatalf("apply %s at %d: %v", mt, index, resp)
	}
}

// fsmScenario applies one command of every type.
func fsmScenario(t *testing.T, f *FSM) {
	job := testJob("web", 1, 100, 100)
	job.Canonicalize()
	eval := &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusPending}
	node := testNode("n1", 1000, 1000)
	node.Events = []*structs.NodeEvent{{Message: "registered", Timestamp: time.Unix(5, 0).UTC()}}
	applyCmd(t, f, 1, NodeRegisterRequestType, &NodeRegisterCommand{Node: node})
	applyCmd(t, f, 2, JobRegisterRequestType, &JobRegisterCommand{Job: job, Eval: eval})
	alloc := &structs.Allocation{ID: "a1", Namespace: "default", JobID: "web", Job: job, TaskGroup: "web",
		Name: "web.web[0]", NodeID: "n1", EvalID: "e1", DesiredStatus: "run", ClientStatus: "pending",
		Resources: &structs.Resources{CPU: 100, MemoryMB: 100}}
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	applyCmd(t, f, 3, ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{alloc}, Evals: []*structs.Evaluation{done}})
	applyCmd(t, f, 4, AllocClientUpdateRequestType, &AllocClientUpdateCommand{Allocs: []*structs.Allocation{{
		ID: "a1", ClientStatus: "running",
		TaskStates: map[string]*structs.TaskState{"app": {State: "running", StartedAt: time.Unix(10, 0).UTC(),
			Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 10}}}},
	}}})
	applyCmd(t, f, 5, NodeUpdateStatusRequestType, &NodeStatusCommand{NodeID: "n1", Status: structs.NodeStatusReady, UpdatedAt: 9})
	applyCmd(t, f, 6, EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{{ID: "e2", Namespace: "default", JobID: "web", Status: structs.EvalStatusBlocked}}})
	applyCmd(t, f, 7, NodeRegisterRequestType, &NodeRegisterCommand{Node: testNode("n2", 1, 1)})
	applyCmd(t, f, 8, NodeDeregisterRequestType, &NodeDeregisterCommand{NodeID: "n2"})
	gone := testJob("gone", 1, 100, 100)
	gone.Canonicalize()
	applyCmd(t, f, 9, JobRegisterRequestType, &JobRegisterCommand{Job: gone, Eval: &structs.Evaluation{ID: "e3", Namespace: "default", JobID: "gone", Status: "pending"}})
	applyCmd(t, f, 10, JobDeregisterRequestType, &JobDeregisterCommand{Namespace: "default", JobID: "gone", Purge: true, Eval: &structs.Evaluation{ID: "e4", Namespace: "default", JobID: "gone", Status: "pending"}})
	applyCmd(t, f, 11, NamespaceUpsertRequestType, &NamespaceUpsertCommand{Namespaces: []*structs.Namespace{
		{Name: "dev", Description: "developers", Meta: map[string]string{"team": "a"}}, {Name: "tmp"}}})
	applyCmd(t, f, 12, NamespaceDeleteRequestType, &NamespaceDeleteCommand{Names: []string{"tmp"}})
}

func TestFSMApply(t *testing.T) {
	rec := &recorder{}
	f, err := newFSM(slog.New(slog.DiscardHandler), rec)
	if err != nil {
		t.Fatal(err)
	}
	fsmScenario(t, f)
	st := f.State()
	a, _ := st.AllocByID(nil, "a1")
	if a.ClientStatus != "running" || a.TaskStates["app"].Events[0].Type != structs.TaskStarted ||
		!a.TaskStates["app"].StartedAt.Equal(time.Unix(10, 0)) || a.AllocModifyIndex != 3 || a.ModifyIndex != 4 {
		t.Fatalf("alloc = %+v", a)
	}
	e, _ := st.EvalByID(nil, "e3")
	if e.JobModifyIndex != 9 || e.Status != structs.EvalStatusPending {
		t.Fatalf("eval = %+v", e)
	}
	if j, _ := st.JobByID(nil, "default", "gone"); j != nil {
		t.Fatal("purged job still there")
	}
	n, _ := st.NodeByID(nil, "n1")
	if n.SecretID != "secret-n1" || n.StatusUpdatedAt != 9 {
		t.Fatalf("node = %+v", n)
	}
	if len(rec.evals) != 5 {
		t.Fatalf("observer saw %d evals", len(rec.evals))
	}
	// Capacity grows when nodes become ready; a running update is not.
	if !reflect.DeepEqual(rec.capacity, []uint64{1, 5, 7}) {
		t.Fatalf("capacity changes at %v", rec.capacity)
	}
	// Unknown types and failing commands are errors.
	if resp := f.Apply(&raft.Log{Index: 11, Type: raft.LogCommand, Data: []byte{200}}); resp == nil {
		t.Fatal("unknown type applied")
	}
	buf, _ := encodeCommand(f.handle, NodeDeregisterRequestType, &NodeDeregisterCommand{NodeID: "nope"})
	if err, _ := f.Apply(&raft.Log{Index: 12, Type: raft.LogCommand, Data: buf}).(error); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("deregister unknown node: %v", err)
	}
}

func TestFSMSnapshotRestore(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	fsmScenario(t, f)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()

	fresh, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	old := fresh.State()
	if err := fresh.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.AbandonCh():
	default:
		t.Fatal("replaced store was not abandoned")
	}
	compareStores(t, f.State(), fresh.State())

	// A corrupt snapshot is refused and leaves the state alone.
	before := fresh.State()
	if err := fresh.Restore(io.NopCloser(bytes.NewReader([]byte{0xc1, 0x00}))); err == nil {
		t.Fatal("corrupt snapshot restored")
	}
	if fresh.State() != before {
		t.Fatal("failed restore replaced the state")
	}
}

func compareStores(t *testing.T, a, b *state.StateStore) {
	t.Helper()
	check := func(name string, x, y any, ex, ey error) {
		t.Helper()
		if ex != nil || ey != nil {
			t.Fatalf("%s: %v %v", name, ex, ey)
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s differ after restore:\n%#v\n%#v", name, x, y)
		}
	}
	ja, ea := a.Jobs(nil)
	jb, eb := b.Jobs(nil)
	check("jobs", ja, jb, ea, eb)
	sa, ea := a.JobSummaries(nil)
	sb, eb := b.JobSummaries(nil)
	check("summaries", sa, sb, ea, eb)
	aa, ea := a.Allocs(nil)
	ab, eb := b.Allocs(nil)
	check("allocs", aa, ab, ea, eb)
	va, ea := a.Evals(nil)
	vb, eb := b.Evals(nil)
	check("evals", va, vb, ea, eb)
	na, ea := a.Nodes(nil)
	nb, eb := b.Nodes(nil)
	check("nodes", na, nb, ea, eb)
	nsa, ea := a.Namespaces(nil, "")
	nsb, eb := b.Namespaces(nil, "")
	check("namespaces", nsa, nsb, ea, eb)
	ia, ea := a.Indexes()
	ib, eb := b.Indexes()
	check("indexes", ia, ib, ea, eb)
	if len(aa) == 0 || len(na) == 0 || len(ja) == 0 || len(nsa) != 2 || nsa[1].Name != "dev" || nsa[1].CreateIndex != 11 {
		t.Fatal("scenario left the state empty")
	}
}
