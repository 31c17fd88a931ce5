package scheduler

import (
	"fmt"
	"math"

	"github.com/drover-io/drover/structs"
)

// nodeUsage is what a node will hold once the plan built so far is
// applied: its proposed allocations and the CPU and memory they use.
type nodeUsage struct {
	allocs   []*structs.Allocation // shared with every caller: read it, never append to it
	cpu, mem int64
	mark     planMark
}

// planMark is how many stops, placements and preemptions the plan held
// for a node when its usage was computed; the plan only grows, so a
// different mark means the usage is stale.
type planMark struct{ stops, placements, preemptions int }

func (r *run) markOf(nodeID string) planMark {
	return planMark{len(r.plan.NodeUpdate[nodeID]), len(r.plan.NodeAllocation[nodeID]), len(r.plan.NodePreemptions[nodeID])}
}

// usage returns the node's proposed allocations: the non-terminal ones in
// the state, minus the plan's stops, preemptions and in-place updates,
// plus the plan's placements. It is computed once per node and kept
// current as the run places allocations (placedOn); any other change of
// the plan on the node recomputes it.
func (r *run) usage(nodeID string) (*nodeUsage, error) {
	mark := r.markOf(nodeID)
	if u, ok := r.usages[nodeID]; ok && u.mark == mark {
		return u, nil
	}
	existing, err := r.state.AllocsByNode(nodeID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of node %q: %w", nodeID, err)
	}
	var gone map[string]bool // stopped, evicted or replaced in place
	if mark != (planMark{}) {
		gone = map[string]bool{}
		for _, byNode := range []map[string][]*structs.Allocation{r.plan.NodeUpdate, r.plan.NodeAllocation, r.plan.NodePreemptions} {
			for _, a := range byNode[nodeID] {
				gone[a.ID] = true
			}
		}
	}
	u := &nodeUsage{mark: mark}
	for _, a := range existing {
		if !a.TerminalStatus() && !gone[a.ID] {
			u.add(a)
		}
	}
	for _, a := range r.plan.NodeAllocation[nodeID] {
		u.add(a)
	}
	r.usages[nodeID] = u
	return u, nil
}

func (u *nodeUsage) add(a *structs.Allocation) {
	u.allocs = append(u.allocs, a)
	c, m := allocUsage(a)
	u.cpu += c
	u.mem += m
}

// placedOn records that the plan now places a, a new allocation, on its
// node, keeping the node's usage current without reading it again.
func (r *run) placedOn(a *structs.Allocation) {
	u, ok := r.usages[a.NodeID]
	if !ok {
		return
	}
	want := u.mark
	want.placements++
	if r.markOf(a.NodeID) != want {
		delete(r.usages, a.NodeID)
		return
	}
	// Callers that hold u.allocs keep their view: they never append.
	u.allocs = append(u.allocs, a)
	c, m := allocUsage(a)
	u.cpu += c
	u.mem += m
	u.mark = want
}

// fits reports whether ask fits on node beside u; when it does not, dim
// names the first exhausted dimension. score is the node's bin-packing
// score with ask placed.
func fits(node *structs.Node, u *nodeUsage, ask *structs.Resources) (fit bool, dim string, score float64) {
	cpuCap, memCap := nodeCapacity(node)
	cpu, mem := u.cpu+int64(ask.CPU), u.mem+int64(ask.MemoryMB)
	if cpu > cpuCap {
		return false, "cpu", 0
	}
	if mem > memCap {
		return false, "memory", 0
	}
	return true, "", binPackScore(cpu, cpuCap, mem, memCap)
}

// AllocsFit reports whether allocs fit on node by CPU and memory; when they
// do not, dim names the first exhausted dimension ("cpu" or "memory").
// score rates the fit for bin-packing: higher means a fuller node.
// The plan applier uses it to re-check a plan against the latest state.
func AllocsFit(node *structs.Node, allocs []*structs.Allocation) (fit bool, dim string, score float64) {
	var cpuCap, memCap int64
	if nr := node.NodeResources; nr != nil {
		cpuCap, memCap = nr.Cpu.CpuShares, nr.Memory.MemoryMB
	}
	if rr := node.ReservedResources; rr != nil {
		cpuCap -= int64(rr.Cpu.CpuShares)
		memCap -= int64(rr.Memory.MemoryMB)
	}
	var cpu, mem int64
	for _, a := range allocs {
		c, m := allocUsage(a)
		cpu += c
		mem += m
	}
	if cpu > cpuCap {
		return false, "cpu", 0
	}
	if mem > memCap {
		return false, "memory", 0
	}
	return true, "", binPackScore(cpu, cpuCap, mem, memCap)
}

// allocUsage returns the CPU (MHz) and memory (MB) an allocation holds.
func allocUsage(a *structs.Allocation) (cpu, mem int64) {
	if a.Resources != nil {
		return int64(a.Resources.CPU), int64(a.Resources.MemoryMB)
	}
	if a.AllocatedResources != nil {
		for _, t := range a.AllocatedResources.Tasks {
			cpu += t.Cpu.CpuShares
			mem += t.Memory.MemoryMB
		}
	}
	return cpu, mem
}

// binPackScore scores a node's utilisation in [0, 1], 1 being full on both
// dimensions. Each dimension contributes 10^free, so the score falls fast as
// a node empties and nearly full nodes are strongly preferred.
func binPackScore(cpu, cpuCap, mem, memCap int64) float64 {
	if cpuCap <= 0 || memCap <= 0 {
		return 0
	}
	freeCPU := 1 - float64(cpu)/float64(cpuCap)
	freeMem := 1 - float64(mem)/float64(memCap)
	total := math.Pow(10, freeCPU) + math.Pow(10, freeMem)
	score := (20 - total) / 18
	return math.Max(0, math.Min(1, score))
}
