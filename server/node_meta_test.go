package server

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

// rackConstraint places only on nodes whose meta.rack is r1.
func rackConstraint() []*structs.Constraint {
	return []*structs.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}}
}

// TestNodeMetaChangeFitsBlockedJob: a service job constrained on a meta
// key no node has is blocked; once the node's client applies that key
// (re-registering the node with its new Meta), the job is placed there.
func TestNodeMetaChangeFitsBlockedJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		node := testNode("n1", 1000, 1000)
		node.Meta = map[string]string{"rack": "r0"}
		registerNode(t, s, node)
		job := testJob("web", 1, 100, 100)
		job.Constraints = rackConstraint()
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		if got := allocsOf(t, s, "web", structs.AllocDesiredStatusRun); len(got) != 0 {
			t.Fatalf("placed %d allocs on a node with meta.rack=r0", len(got))
		}

		node = node.Copy()
		node.Meta = map[string]string{"rack": "r1"}
		registerNode(t, s, node)
		waitFor(t, "the job placed on n1", func() (bool, string) {
			got := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
			return len(got) == 1 && got[0].NodeID == "n1", fmt.Sprintf("%d allocs", len(got))
		})
		stored, err := s.State().NodeByID(nil, "n1")
		if err != nil || stored.Meta["rack"] != "r1" {
			t.Fatalf("stored node meta = %v, %v", stored.Meta, err)
		}
	})
}

// TestNodeMetaChangeEvaluatesSystemJobs: a ready node whose meta changed
// gets evaluations for the system jobs, which now fit it; a
// re-registration that changes nothing creates none.
func TestNodeMetaChangeEvaluatesSystemJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		node := testNode("n1", 1000, 1000)
		registerNode(t, s, node)
		job := testJob("sys", 1, 100, 100)
		job.Type = structs.JobTypeSystem
		job.Constraints = rackConstraint()
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		if got := allocsOf(t, s, "sys", structs.AllocDesiredStatusRun); len(got) != 0 {
			t.Fatalf("placed %d system allocs on a node without meta.rack", len(got))
		}
		if reg := registerNode(t, s, node.Copy()); len(reg.EvalIDs) != 0 {
			t.Fatalf("unchanged re-registration created evals %v", reg.EvalIDs)
		}

		node = node.Copy()
		node.Meta = map[string]string{"rack": "r1"}
		reg := registerNode(t, s, node)
		if len(reg.EvalIDs) != 1 {
			t.Fatalf("evals of a meta change = %v, want one (the system job)", reg.EvalIDs)
		}
		waitEvalStatus(t, s, reg.EvalIDs[0], structs.EvalStatusComplete)
		if got := allocsOf(t, s, "sys", structs.AllocDesiredStatusRun); len(got) != 1 || got[0].NodeID != "n1" {
			t.Fatalf("system allocs after the meta change = %d", len(got))
		}
	})
}
