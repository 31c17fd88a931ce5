package scheduler

import (
	"path"
	"strconv"

	"github.com/drover-io/drover/structs"
)

// Metric keys used in AllocMetric.ConstraintFiltered besides constraint strings.
const (
	filterMissingDrivers = "missing drivers"
	filterDistinctHosts  = structs.ConstraintDistinctHosts
)

// inDatacenters reports whether dc matches one of the job's datacenter
// patterns (globs: "*" matches all, "dc-*" a family).
func inDatacenters(dc string, patterns []string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, dc); err == nil && ok {
			return true
		}
		if p == dc {
			return true
		}
	}
	return false
}

// driverHealthy reports whether node can run tasks of driver: its
// fingerprint says detected and healthy, or, without one, the
// "driver.<name>" attribute says true.
func driverHealthy(node *structs.Node, driver string) bool {
	if info, ok := node.Drivers[driver]; ok && info != nil {
		return info.Detected && info.Healthy
	}
	v, ok := node.Attributes["driver."+driver]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// feasible reports whether node may run group tg of the job, recording in
// metric why it was filtered. It does not check resources or placement-time
// constraints (distinct_hosts, distinct_property).
func (r *run) feasible(node *structs.Node, tg *structs.TaskGroup, metric *structs.AllocMetric) bool {
	filter := func(key string) bool {
		filterNode(metric, node, key)
		return false
	}
	if !node.Ready() {
		metric.NodesFiltered++
		return false
	}
	for _, t := range tg.Tasks {
		if !driverHealthy(node, t.Driver) {
			return filter(filterMissingDrivers)
		}
	}
	for _, c := range constraintsOf(r.job, tg) {
		if !r.checker.meets(c, node) {
			return filter(c.String())
		}
	}
	return true
}

// filterNode records in metric that node was filtered, and why (key).
func filterNode(metric *structs.AllocMetric, node *structs.Node, key string) {
	metric.NodesFiltered++
	if metric.ConstraintFiltered == nil {
		metric.ConstraintFiltered = map[string]int{}
	}
	metric.ConstraintFiltered[key]++
	if node.NodeClass != "" {
		if metric.ClassFiltered == nil {
			metric.ClassFiltered = map[string]int{}
		}
		metric.ClassFiltered[node.NodeClass]++
	}
}

// constraintsOf returns the job's, the group's and its tasks' constraints.
func constraintsOf(job *structs.Job, tg *structs.TaskGroup) []*structs.Constraint {
	out := append([]*structs.Constraint(nil), job.Constraints...)
	out = append(out, tg.Constraints...)
	for _, t := range tg.Tasks {
		out = append(out, t.Constraints...)
	}
	return out
}

// distinctHostsScope returns which allocations may not share a node with a
// new one of group tg: "job" (any of the job's), "group" (the group's), or
// "" when there is no distinct_hosts constraint.
func distinctHostsScope(job *structs.Job, tg *structs.TaskGroup) string {
	for _, c := range job.Constraints {
		if c.Operand == structs.ConstraintDistinctHosts && c.RTarget != "false" {
			return "job"
		}
	}
	groupCs := append([]*structs.Constraint(nil), tg.Constraints...)
	for _, t := range tg.Tasks {
		groupCs = append(groupCs, t.Constraints...)
	}
	for _, c := range groupCs {
		if c.Operand == structs.ConstraintDistinctHosts && c.RTarget != "false" {
			return "group"
		}
	}
	return ""
}
