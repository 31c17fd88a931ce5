package scheduler

import (
	"path"
	"strconv"
	"strings"

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
// constraints (distinct_hosts, distinct_property). The answer for a node
// is computed once per computed class (see feasibility).
func (r *run) feasible(node *structs.Node, tg *structs.TaskGroup, metric *structs.AllocMetric) bool {
	if !node.Ready() {
		metric.NodesFiltered++
		return false
	}
	f := r.feasibilityOf(tg)
	reason := f.check(r, node)
	if reason == "" {
		// A node's host networks are its own, not its class's.
		reason = missingHostNetwork(node, tg) // ports.go
	}
	if reason == "" {
		// Per node, not per class: a computed class leaves host volumes out.
		reason = volumesBlock(node, tg) // host_volumes.go
	}
	if reason == "" {
		reason = cniBlock(node, tg) // cni.go
	}
	if reason == "" {
		return true
	}
	filterNode(metric, node, reason)
	return false
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

// feasibility checks one group's drivers and constraints against nodes,
// caching the answer per computed class (structs.Node.ComputeClass):
// nodes of one class differ only in unique values, so the constraints
// that read none give them the same answer. The constraints that read a
// unique value (${node.unique.id}, ${attr.unique.*}, ...) are checked on
// every node.
type feasibility struct {
	drivers     []string
	constraints []*structs.Constraint // job's, group's, tasks', in order
	unique      []bool                // by constraint: reads a unique value
	anyUnique   bool
	byClass     map[string]classVerdict
}

// classVerdict is a class's answer: the index of the first constraint it
// fails (len(constraints) when none; -1 when a driver is missing).
type classVerdict struct{ failed int }

func (r *run) feasibilityOf(tg *structs.TaskGroup) *feasibility {
	if f, ok := r.feasibilities[tg]; ok {
		return f
	}
	f := &feasibility{constraints: constraintsOf(r.job, tg), byClass: map[string]classVerdict{}}
	seen := map[string]bool{}
	for _, t := range tg.Tasks {
		if !seen[t.Driver] {
			seen[t.Driver] = true
			f.drivers = append(f.drivers, t.Driver)
		}
	}
	f.unique = make([]bool, len(f.constraints))
	for i, c := range f.constraints {
		f.unique[i] = readsUnique(c.LTarget) || readsUnique(c.RTarget)
		f.anyUnique = f.anyUnique || f.unique[i]
	}
	r.feasibilities[tg] = f
	return f
}

// check returns why node cannot run the group ("" when it can): the
// metric key of the first failed check, in the order drivers, then
// constraints as constraintsOf lists them.
func (f *feasibility) check(r *run, node *structs.Node) string {
	class := r.classOf(node)
	v, ok := f.byClass[class]
	if !ok {
		v = classVerdict{failed: len(f.constraints)}
		for _, d := range f.drivers {
			if !driverHealthy(node, d) {
				v.failed = -1
				break
			}
		}
		if v.failed >= 0 {
			for i, c := range f.constraints {
				if !f.unique[i] && !r.checker.meets(c, node) {
					v.failed = i
					break
				}
			}
		}
		f.byClass[class] = v
	}
	if v.failed < 0 {
		return filterMissingDrivers
	}
	if f.anyUnique {
		for i := 0; i < v.failed; i++ {
			if f.unique[i] && !r.checker.meets(f.constraints[i], node) {
				return f.constraints[i].String()
			}
		}
	}
	if v.failed < len(f.constraints) {
		return f.constraints[v.failed].String()
	}
	return ""
}

// readsUnique reports whether a constraint target reads a value unique
// to a node, which its computed class leaves out.
func readsUnique(target string) bool {
	for _, p := range []string{"${node.unique.", "${attr." + structs.UniquePrefix, "${meta." + structs.UniquePrefix} {
		if strings.Contains(target, p) {
			return true
		}
	}
	return false
}

// classOf returns node's computed class: the one the state store set,
// else computed once per run.
func (r *run) classOf(node *structs.Node) string {
	if node.ComputedClass != "" {
		return node.ComputedClass
	}
	c, ok := r.classes[node.ID]
	if !ok {
		c = node.ComputeClass()
		r.classes[node.ID] = c
	}
	return c
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
