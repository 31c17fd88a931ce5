package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// TestApplyPlanRejectsPortHandedOutTwice: two schedulers that chose the
// same host port on one node cannot both commit; a port on another
// address, or one freed by a stop in the same plan, can.
func TestApplyPlanRejectsPortHandedOutTwice(t *testing.T) {
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("n1", 1000, 1000))
	job := testJob("web", 1, 100, 100)
	job.Canonicalize()
	withPort := func(id, ip string, port int) *structs.Allocation {
		a := planAlloc(id, "n1", job, 100)
		a.AllocatedResources = &structs.AllocatedResources{
			Tasks:  map[string]*structs.AllocatedTaskResources{"t": {}},
			Shared: structs.AllocatedSharedResources{Ports: structs.AllocatedPorts{{Label: "http", Value: port, HostIP: ip}}},
		}
		return a
	}
	submit := func(a *structs.Allocation, stop ...*structs.Allocation) planResult {
		plan := &scheduler.Plan{EvalID: "e1", Job: job,
			NodeAllocation: map[string][]*structs.Allocation{}, NodeUpdate: map[string][]*structs.Allocation{}}
		for _, st := range stop {
			plan.AppendStop(st, "replaced", 0)
		}
		plan.AppendAlloc(a)
		return s.submitPlan(context.Background(), &pendingPlan{plan: plan})
	}
	first := withPort("first", "10.0.0.1", 8080)
	if res := submit(first); res.Err != nil || res.Rejected {
		t.Fatalf("first = %+v", res)
	}
	if res := submit(withPort("second", "10.0.0.1", 8080)); res.Err != nil || !res.Rejected {
		t.Fatalf("second, same port = %+v, want rejected", res)
	}
	if a, _ := s.State().AllocByID(nil, "second"); a != nil {
		t.Fatal("the port was handed out twice")
	}
	if res := submit(withPort("third", "10.0.0.2", 8080)); res.Err != nil || res.Rejected {
		t.Fatalf("third, other address = %+v", res)
	}
	cur, _ := s.State().AllocByID(nil, "first")
	if res := submit(withPort("fourth", "10.0.0.1", 8080), cur); res.Err != nil || res.Rejected {
		t.Fatalf("fourth, replacing first = %+v", res)
	}
}
