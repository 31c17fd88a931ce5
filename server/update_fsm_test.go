package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

func TestApplyPlanWithPreemption(t *testing.T) {
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("n1", 1000, 1000))
	low := testJob("low", 1, 900, 100)
	low.Priority = 20
	registerJob(t, s, low)
	jobIdle(t, s, "low")
	victim := running(t, s, "low")[0]
	high := testJob("high", 1, 500, 100)
	high.Canonicalize()

	newPlan := func() *scheduler.Plan {
		return &scheduler.Plan{EvalID: "e1", Job: high, NodeAllocation: map[string][]*structs.Allocation{},
			NodeUpdate: map[string][]*structs.Allocation{}, NodePreemptions: map[string][]*structs.Allocation{},
			Annotations: &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}}
	}
	// Without the eviction the node is full: rejected.
	p := newPlan()
	p.AppendAlloc(planAlloc("p1", "n1", high, 500))
	if res := s.submitPlan(context.Background(), &pendingPlan{plan: p}); res.Err != nil || !res.Rejected {
		t.Fatalf("plan without preemption: %+v", res)
	}
	// With it, both are committed, and the low job gets an evaluation.
	p = newPlan()
	placed := planAlloc("p2", "n1", high, 500)
	placed.PreemptedAllocations = []string{victim.ID}
	p.AppendAlloc(placed)
	p.AppendPreemption(victim, "p2", 1)
	if res := s.submitPlan(context.Background(), &pendingPlan{plan: p}); res.Err != nil || res.Rejected {
		t.Fatalf("plan with preemption: %+v", res)
	}
	got, _ := s.State().AllocByID(nil, victim.ID)
	if got.DesiredStatus != structs.AllocDesiredStatusEvict || got.PreemptedByAllocation != "p2" {
		t.Fatalf("victim: %s by %q", got.DesiredStatus, got.PreemptedByAllocation)
	}
	if a, _ := s.State().AllocByID(nil, "p2"); a == nil || len(a.PreemptedAllocations) != 1 {
		t.Fatalf("placement: %+v", a)
	}
	evals, _ := s.State().EvalsByJob(nil, "default", "low")
	found := false
	for _, e := range evals {
		found = found || e.TriggeredBy == structs.EvalTriggerPreemption
	}
	if !found {
		t.Fatal("no preemption evaluation for the low job")
	}
}

func TestFSMSnapshotVersionsDeploymentsConfig(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	v0 := testJob("web", 1, 100, 100)
	v0.Canonicalize()
	applyCmd(t, f, 1, JobRegisterRequestType, &JobRegisterCommand{Job: v0, Eval: &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: "pending"}})
	v1 := v0.Copy()
	v1.Version = 1
	v1.Meta = map[string]string{"v": "1"}
	applyCmd(t, f, 2, JobRegisterRequestType, &JobRegisterCommand{Job: v1, Eval: &structs.Evaluation{ID: "e2", Namespace: "default", JobID: "web", Status: "pending"}})
	dep := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1, Status: structs.DeploymentStatusSuccessful,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1}}}
	applyCmd(t, f, 3, ApplyPlanResultsRequestType, &PlanResultCommand{Deployments: []*structs.Deployment{dep}})
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.PreemptionConfig.ServiceSchedulerEnabled = true
	buf, err := encodeCommand(f.handle, SchedulerConfigRequestType, &SchedulerConfigCommand{Config: *cfg})
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: buf}); resp != true {
		t.Fatalf("apply scheduler config: %v", resp)
	}

	st := f.State()
	if j, _ := st.JobByID(nil, "default", "web"); !j.Stable {
		t.Fatal("a successful deployment did not mark its job version stable")
	}
	if v, _ := st.JobByIDAndVersion(nil, "default", "web", 0); v == nil || v.Stable {
		t.Fatalf("version 0: %+v", v)
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
	va, _ := st.AllJobVersions(nil)
	vb, _ := fresh.State().AllJobVersions(nil)
	da, _ := st.Deployments(nil)
	db, _ := fresh.State().Deployments(nil)
	ca, _ := st.SchedulerConfig(nil)
	cb, _ := fresh.State().SchedulerConfig(nil)
	if len(va) != 2 || !reflect.DeepEqual(va, vb) {
		t.Errorf("job versions differ after restore: %d vs %d", len(va), len(vb))
	}
	if len(da) != 1 || !reflect.DeepEqual(da, db) {
		t.Errorf("deployments differ after restore")
	}
	if ca == nil || !ca.PreemptionConfig.ServiceSchedulerEnabled || !reflect.DeepEqual(ca, cb) {
		t.Errorf("scheduler config differs after restore: %+v vs %+v", ca, cb)
	}
}
