package server

import (
	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// placementMetrics returns, per group, the metrics of the new allocation
// of the lowest name that a plan places: the nodes looked at and the
// scores of the chosen node and its runners-up. In-place updates, which
// keep their node, are left out.
func placementMetrics(plan *scheduler.Plan) map[string]*structs.AllocMetric {
	var out map[string]*structs.AllocMetric
	first := map[string]string{} // group -> name of the allocation kept
	for _, a := range plan.Placements() {
		if a.CreateIndex != 0 || a.Metrics == nil {
			continue
		}
		if name, ok := first[a.TaskGroup]; ok && name <= a.Name {
			continue
		}
		if out == nil {
			out = map[string]*structs.AllocMetric{}
		}
		first[a.TaskGroup] = a.Name
		out[a.TaskGroup] = a.Metrics
	}
	return out
}
