package scheduler

import (
	"math"

	"github.com/drover-io/drover/structs"
)

// proposed returns the allocations that will be on node once the plan is
// applied: the non-terminal ones in the state, minus the plan's stops, plus
// its placements.
func (r *run) proposed(nodeID string) ([]*structs.Allocation, error) {
	existing, err := r.state.AllocsByNode(nodeID)
	if err != nil {
		return nil, err
	}
	stopped := map[string]bool{} // or replaced by an in-place update
	for _, a := range r.plan.NodeUpdate[nodeID] {
		stopped[a.ID] = true
	}
	for _, a := range r.plan.NodeAllocation[nodeID] {
		stopped[a.ID] = true
	}
	for _, a := range r.plan.NodePreemptions[nodeID] {
		stopped[a.ID] = true
	}
	var out []*structs.Allocation
	for _, a := range existing {
		if !a.TerminalStatus() && !stopped[a.ID] {
			out = append(out, a)
		}
	}
	return append(out, r.plan.NodeAllocation[nodeID]...), nil
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
