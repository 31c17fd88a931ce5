package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

func planAlloc(id, node string, job *structs.Job, cpu int) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, JobID: job.ID, Job: job, TaskGroup: "web",
		Name: structs.AllocName(job.ID, "web", 0), NodeID: node, EvalID: "e1",
		Resources:     &structs.Resources{CPU: cpu, MemoryMB: 10},
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}
}

func TestApplyPlanRechecksCapacity(t *testing.T) {
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("n1", 1000, 1000))
	registerNode(t, s, testNode("n2", 1000, 1000))
	job := testJob("web", 1, 100, 100)
	job.Canonicalize()
	// Something else already uses most of n2.
	busy := planAlloc("busy", "n2", job, 900)
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
		t.Fatal(err)
	}
	eval := &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete}

	tests := []struct {
		name        string
		placements  []*structs.Allocation
		stops       []*structs.Allocation
		rejected    bool
		committed   []string
		evalWritten bool
	}{
		{
			name:        "fits",
			placements:  []*structs.Allocation{planAlloc("p1", "n1", job, 500)},
			committed:   []string{"p1"},
			evalWritten: true,
		},
		{
			name:       "partial: n2 is full",
			placements: []*structs.Allocation{planAlloc("p2", "n1", job, 100), planAlloc("p3", "n2", job, 200)},
			rejected:   true,
			committed:  []string{"p2"},
		},
		{
			name:        "a stop in the same plan frees room",
			placements:  []*structs.Allocation{planAlloc("p4", "n2", job, 200)},
			stops:       []*structs.Allocation{busy},
			committed:   []string{"p4"},
			evalWritten: true,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &scheduler.Plan{EvalID: "e1", Job: job,
				NodeAllocation: map[string][]*structs.Allocation{}, NodeUpdate: map[string][]*structs.Allocation{}}
			for _, a := range tt.placements {
				plan.AppendAlloc(a)
			}
			for _, a := range tt.stops {
				plan.AppendStop(a, "test", 1)
			}
			e := eval.Copy()
			e.StatusDescription = fmt.Sprintf("case %d", i)
			res := s.submitPlan(context.Background(), &pendingPlan{plan: plan, evals: []*structs.Evaluation{e}})
			if res.Err != nil || res.Rejected != tt.rejected {
				t.Fatalf("result = %+v", res)
			}
			for _, id := range tt.committed {
				if a, _ := s.State().AllocByID(nil, id); a == nil {
					t.Errorf("alloc %s not committed", id)
				}
			}
			for _, a := range tt.placements {
				got, _ := s.State().AllocByID(nil, a.ID)
				if got != nil && !contains(tt.committed, a.ID) {
					t.Errorf("alloc %s committed on a full node", a.ID)
				}
			}
			stored, _ := s.State().EvalByID(nil, "e1")
			if written := stored != nil && stored.StatusDescription == e.StatusDescription; written != tt.evalWritten {
				t.Errorf("eval written = %v, want %v", written, tt.evalWritten)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestConcurrentWorkersNeverOvercommit registers more work than fits with
// several workers: the plan applier must keep every node within capacity.
func TestConcurrentWorkersNeverOvercommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, func(c *Config) { c.NumWorkers = 4 })
		registerNode(t, s, testNode("n1", 1000, 4096))
		registerNode(t, s, testNode("n2", 1000, 4096))
		var evals []string
		for i := range 8 {
			r := registerJob(t, s, testJob(fmt.Sprintf("job-%d", i), 1, 300, 100))
			evals = append(evals, r.EvalID)
		}
		for _, id := range evals {
			waitEvalStatus(t, s, id, structs.EvalStatusComplete)
		}
		placed := 0
		for _, n := range []string{"n1", "n2"} {
			allocs, _ := s.State().AllocsByNode(nil, n)
			cpu := 0
			for _, a := range allocs {
				cpu += a.Resources.CPU
			}
			if cpu > 1000 {
				t.Fatalf("node %s overcommitted: %d MHz", n, cpu)
			}
			placed += len(allocs)
		}
		if placed != 6 {
			t.Fatalf("placed %d allocs, want 6 (3 per node)", placed)
		}
		blocked := 0
		all, _ := s.State().Evals(nil)
		for _, e := range all {
			if e.Status == structs.EvalStatusBlocked {
				blocked++
			}
		}
		if blocked != 2 {
			t.Fatalf("blocked evals = %d, want 2", blocked)
		}
	})
}
