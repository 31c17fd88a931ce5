package server

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

// TestSysbatchJobOnEveryNodeOnce: a sysbatch job gets one allocation per
// node; one that completed is not placed again when the job is evaluated
// again, and a node that joins while the job is registered gets one.
func TestSysbatchJobOnEveryNodeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 1000, 1000))
		job := testJob("sb", 1, 100, 100)
		job.Type = structs.JobTypeSysBatch
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		first := allocsOf(t, s, "sb", structs.AllocDesiredStatusRun)
		if len(first) != 1 {
			t.Fatalf("sysbatch allocs = %d, want 1", len(first))
		}
		done := &structs.Allocation{ID: first[0].ID, ClientStatus: structs.AllocClientStatusComplete,
			TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}}
		if _, err := s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1",
			Alloc: []*structs.Allocation{done}}); err != nil {
			t.Fatal(err)
		}
		ev, err := s.JobEvaluate(context.Background(), &structs.JobEvaluateRequest{JobID: "sb"})
		if err != nil {
			t.Fatal(err)
		}
		waitEvalStatus(t, s, ev.EvalID, structs.EvalStatusComplete)
		if all := allocsOf(t, s, "sb", ""); len(all) != 1 {
			t.Fatalf("after the allocation completed and the job was evaluated again: %d allocations, want the completed one", len(all))
		}

		reg := registerNode(t, s, testNode("n2", 1000, 1000))
		if len(reg.EvalIDs) != 1 {
			t.Fatalf("node registration evals = %v, want one for the sysbatch job", reg.EvalIDs)
		}
		waitEvalStatus(t, s, reg.EvalIDs[0], structs.EvalStatusComplete)
		all := allocsOf(t, s, "sb", "")
		if len(all) != 2 || all[0].NodeID == all[1].NodeID {
			t.Fatalf("sysbatch allocs after n2 joined = %d", len(all))
		}
	})
}
