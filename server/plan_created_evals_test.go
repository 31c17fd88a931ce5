package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestJobPlanCreatedEvals: a plan whose placements fail names the blocked
// evaluation that running the job would create (Nomad's CreatedEvals),
// without storing it; a plan that fits creates none.
func TestJobPlanCreatedEvals(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	resp, err := s.JobPlan(ctx, &structs.JobPlanRequest{Job: testJob("web", 2, 100, 100)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.CreatedEvals) != 1 {
		t.Fatalf("a plan without nodes created %d evaluations, want the blocked one", len(resp.CreatedEvals))
	}
	b := resp.CreatedEvals[0]
	if b.Status != structs.EvalStatusBlocked || b.JobID != "web" || b.TriggeredBy != structs.EvalTriggerQueuedAllocs ||
		b.FailedTGAllocs["web"] == nil || b.QueuedAllocations["web"] != 2 {
		t.Fatalf("created eval %+v", b)
	}
	if e, _ := s.State().EvalByID(nil, b.ID); e != nil {
		t.Fatal("the plan stored its blocked evaluation")
	}
	registerNode(t, s, testNode("n1", 4000, 4096))
	resp, err = s.JobPlan(ctx, &structs.JobPlanRequest{Job: testJob("web", 2, 100, 100)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.CreatedEvals) != 0 {
		t.Fatalf("a plan that fits created %+v", resp.CreatedEvals)
	}
}
