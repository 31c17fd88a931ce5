package scheduler

import (
	"fmt"
	"strconv"

	"github.com/drover-io/drover/structs"
)

// distinct_property, as Nomad's: `constraint { distinct_property =
// "${meta.rack}" value = "2" }` allows at most value (default 1)
// allocations per distinct value of the property. Declared on the job, it
// counts the job's allocations of every group; declared on a group (or one
// of its tasks), the group's. The allocations counted are the job's that
// are not terminal and that the plan does not stop, plus the plan's own
// placements, each on its node's value; a node without the property
// cannot take the allocation. Like distinct_hosts it is checked when an
// allocation is placed, against the plan built so far.

// propertyLimit is one distinct_property constraint with the use of each
// of its property's values.
type propertyLimit struct {
	target string // the property, "${meta.rack}"
	group  string // "" for a job-level constraint
	limit  uint64
	// invalid says why the constraint cannot be met ("" when valid).
	invalid string
	used    map[string]uint64
}

// distinctProperties returns the distinct_property constraints that apply
// to a new allocation of tg, with their current use; nil when there are
// none.
func (r *run) distinctProperties(tg *structs.TaskGroup) ([]*propertyLimit, error) {
	var limits []*propertyLimit
	add := func(c *structs.Constraint, group string) {
		if c.Operand != structs.ConstraintDistinctProperty {
			return
		}
		p := &propertyLimit{target: c.LTarget, group: group, limit: 1, used: map[string]uint64{}}
		if c.RTarget != "" {
			n, err := strconv.ParseUint(c.RTarget, 10, 64)
			if err != nil || n == 0 {
				p.invalid = fmt.Sprintf("distinct_property: value %q is not a positive whole number", c.RTarget)
			}
			p.limit = n
		}
		limits = append(limits, p)
	}
	for _, c := range r.job.Constraints {
		add(c, "")
	}
	for _, c := range tg.Constraints {
		add(c, tg.Name)
	}
	for _, t := range tg.Tasks {
		for _, c := range t.Constraints {
			add(c, tg.Name)
		}
	}
	if len(limits) == 0 {
		return nil, nil
	}
	allocs := r.liveJobAllocs()
	nodes := make(map[string]*structs.Node, len(r.nodes))
	for _, n := range r.nodes {
		nodes[n.ID] = n
	}
	for _, a := range allocs {
		node, ok := nodes[a.NodeID]
		if !ok {
			var err error
			if node, err = r.state.NodeByID(a.NodeID); err != nil {
				return nil, fmt.Errorf("read node %q: %w", a.NodeID, err)
			}
			nodes[a.NodeID] = node
		}
		if node == nil {
			continue
		}
		for _, p := range limits {
			if p.group != "" && a.TaskGroup != p.group {
				continue
			}
			if v, ok := resolveTarget(p.target, node); ok {
				p.used[v]++
			}
		}
	}
	return limits, nil
}

// liveJobAllocs returns the job's allocations that will be running once
// the plan built so far is applied: the existing ones that are not
// terminal and that the plan neither stops, evicts nor replaces in place,
// and the plan's placements.
func (r *run) liveJobAllocs() []*structs.Allocation {
	gone := map[string]bool{}
	for _, byNode := range []map[string][]*structs.Allocation{r.plan.NodeUpdate, r.plan.NodePreemptions, r.plan.NodeAllocation} {
		for _, allocs := range byNode {
			for _, a := range allocs {
				gone[a.ID] = true
			}
		}
	}
	var out []*structs.Allocation
	for _, a := range r.allocs {
		if !a.TerminalStatus() && !gone[a.ID] {
			out = append(out, a)
		}
	}
	for _, allocs := range r.plan.NodeAllocation {
		for _, a := range allocs {
			if a.Namespace == r.job.Namespace && a.JobID == r.job.ID && !a.TerminalStatus() {
				out = append(out, a)
			}
		}
	}
	return out
}

// propertyBlocks returns why the limits keep a new allocation off node
// (the key recorded in the metric's ConstraintFiltered), or "".
func propertyBlocks(limits []*propertyLimit, node *structs.Node) string {
	for _, p := range limits {
		if p.invalid != "" {
			return p.invalid
		}
		v, ok := resolveTarget(p.target, node)
		if !ok {
			return fmt.Sprintf("distinct_property: %s is not set", p.target)
		}
		if used := p.used[v]; used >= p.limit {
			return fmt.Sprintf("distinct_property: %s = %q already has %d of %d allocations", p.target, v, used, p.limit)
		}
	}
	return ""
}

// countPlacement counts a new allocation on node in the limits' use, as
// a placer does after each placement instead of counting again.
func countPlacement(limits []*propertyLimit, node *structs.Node) {
	for _, p := range limits {
		if v, ok := resolveTarget(p.target, node); ok {
			p.used[v]++
		}
	}
}
