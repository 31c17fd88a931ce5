package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// TestApplyPlanRejectsDeviceHandedOutTwice: two schedulers that chose the
// same GPU instance on one node cannot both commit.
func TestApplyPlanRejectsDeviceHandedOutTwice(t *testing.T) {
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("n1", 1000, 1000))
	job := testJob("web", 1, 100, 100)
	job.Canonicalize()
	withGPU := func(id, instance string) *structs.Allocation {
		a := planAlloc(id, "n1", job, 100)
		a.AllocatedResources = &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"t": {Devices: []*structs.AllocatedDeviceResource{{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{instance}}}}}}
		return a
	}
	submit := func(a *structs.Allocation) planResult {
		plan := &scheduler.Plan{EvalID: "e1", Job: job,
			NodeAllocation: map[string][]*structs.Allocation{}, NodeUpdate: map[string][]*structs.Allocation{}}
		plan.AppendAlloc(a)
		return s.submitPlan(context.Background(), &pendingPlan{plan: plan})
	}
	if res := submit(withGPU("first", "gpu-0")); res.Err != nil || res.Rejected {
		t.Fatalf("first = %+v", res)
	}
	if res := submit(withGPU("second", "gpu-0")); res.Err != nil || !res.Rejected {
		t.Fatalf("second, same instance = %+v, want rejected", res)
	}
	if a, _ := s.State().AllocByID(nil, "second"); a != nil {
		t.Fatal("the instance was handed out twice")
	}
	if res := submit(withGPU("third", "gpu-1")); res.Err != nil || res.Rejected {
		t.Fatalf("third, other instance = %+v", res)
	}
}
