package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestListResources checks ?resources=true of Nomad's lists: the stubs
// carry allocated (allocations) and offered and reserved (nodes) resources
// only when asked.
func TestListResources(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	n := testNode("n1", 4000, 4096)
	n.ReservedResources = &structs.NodeReservedResources{Cpu: structs.NodeReservedCpuResources{CpuShares: 100}}
	registerNode(t, s, n)
	r := registerJob(t, s, testJob("web", 1, 100, 100))
	waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)

	for _, resources := range []bool{false, true} {
		allocs, err := s.AllocList(ctx, &structs.AllocListRequest{Resources: resources})
		if err != nil || len(allocs.Allocations) != 1 {
			t.Fatalf("allocs %+v, %v", allocs, err)
		}
		if got := allocs.Allocations[0].AllocatedResources != nil; got != resources {
			t.Errorf("resources=%t: alloc stub has AllocatedResources: %t", resources, got)
		}
		nodes, err := s.NodeList(ctx, &structs.NodeListRequest{Resources: resources})
		if err != nil || len(nodes.Nodes) != 1 {
			t.Fatalf("nodes %+v, %v", nodes, err)
		}
		stub := nodes.Nodes[0]
		if got := stub.NodeResources != nil && stub.ReservedResources != nil; got != resources {
			t.Errorf("resources=%t: node stub has resources: %t", resources, got)
		}
	}
}
