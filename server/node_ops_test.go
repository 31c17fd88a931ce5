package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestNodeEvaluate(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	if _, err := s.NodeEvaluate(ctx, &structs.NodeEvaluateRequest{NodeID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("evaluate an unknown node: %v", err)
	}
	registerNode(t, s, testNode("n1", 1000, 1000))
	// No job: nothing to evaluate, and no write.
	resp, err := s.NodeEvaluate(ctx, &structs.NodeEvaluateRequest{NodeID: "n1"})
	if err != nil || len(resp.EvalIDs) != 0 || resp.EvalCreateIndex != 0 || resp.Index == 0 {
		t.Fatalf("evaluate an idle node = %+v, %v", resp, err)
	}
	job := testJob("web", 1, 100, 100)
	registerJob(t, s, job)
	stored, _ := s.State().JobByID(nil, "default", "web")
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{planAlloc("a1", "n1", stored, 100)}}); err != nil {
		t.Fatal(err)
	}
	resp, err = s.NodeEvaluate(ctx, &structs.NodeEvaluateRequest{NodeID: "n1"})
	if err != nil || len(resp.EvalIDs) != 1 || resp.EvalCreateIndex == 0 || resp.Index != resp.EvalCreateIndex {
		t.Fatalf("evaluate = %+v, %v", resp, err)
	}
	e, err := s.State().EvalByID(nil, resp.EvalIDs[0])
	if err != nil || e == nil || e.JobID != "web" || e.NodeID != "n1" || e.TriggeredBy != structs.EvalTriggerNodeUpdate {
		t.Fatalf("stored eval %+v, %v", e, err)
	}
}

func TestNodePurge(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	if _, err := s.NodePurge(ctx, &structs.NodePurgeRequest{NodeID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("purge an unknown node: %v", err)
	}
	registerNode(t, s, testNode("n1", 1000, 1000))
	registerJob(t, s, testJob("web", 2, 100, 100))
	stored, _ := s.State().JobByID(nil, "default", "web")
	done := planAlloc("a2", "n1", stored, 100)
	done.ClientStatus = structs.AllocClientStatusComplete
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{planAlloc("a1", "n1", stored, 100), done}}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.NodePurge(ctx, &structs.NodePurgeRequest{NodeID: "n1", WriteRequest: structs.WriteRequest{RequestID: "purge-1"}})
	if err != nil || len(resp.EvalIDs) != 1 || resp.Index == 0 || resp.NodeModifyIndex != resp.Index || resp.EvalCreateIndex != resp.Index {
		t.Fatalf("purge = %+v, %v", resp, err)
	}
	if n, err := s.State().NodeByID(nil, "n1"); err != nil || n != nil {
		t.Fatalf("purged node still stored: %+v, %v", n, err)
	}
	for id, want := range map[string]string{"a1": structs.AllocClientStatusLost, "a2": structs.AllocClientStatusComplete} {
		a, err := s.State().AllocByID(nil, id)
		if err != nil || a == nil || a.ClientStatus != want {
			t.Fatalf("alloc %s after the purge: %+v, %v; want client status %s", id, a, err, want)
		}
	}
	e, err := s.State().EvalByID(nil, resp.EvalIDs[0])
	if err != nil || e == nil || e.JobID != "web" || e.Status != structs.EvalStatusPending {
		t.Fatalf("purge eval %+v, %v", e, err)
	}
	// A repeat of the same request answers as the first did.
	again, err := s.NodePurge(ctx, &structs.NodePurgeRequest{NodeID: "n1", WriteRequest: structs.WriteRequest{RequestID: "purge-1"}})
	if err != nil || again.Index != resp.Index || len(again.EvalIDs) != 1 {
		t.Fatalf("repeated purge = %+v, %v", again, err)
	}
	// A purged node's client registers again.
	registerNode(t, s, testNode("n1", 1000, 1000))
	if n, err := s.State().NodeByID(nil, "n1"); err != nil || n == nil {
		t.Fatalf("node registering after a purge: %+v, %v", n, err)
	}
}
