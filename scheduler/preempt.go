package scheduler

import (
	"sort"

	"github.com/drover-io/drover/structs"
)

// Preemption: when a placement fits on no feasible node, allocations of
// jobs whose priority is at least structs.PreemptionPriorityDelta lower
// may be evicted. On each full node the scheduler chooses the set that
// frees the missing CPU and memory with the least disruption, and places
// on the node whose set costs least:
//
//  1. the highest priority evicted is as low as possible;
//  2. then as few allocations as possible are evicted;
//  3. then the freed resources exceed the need as little as possible;
//  4. then the node ID (determinism).

// preemptCost ranks a node's preemption set; lower is better.
type preemptCost struct {
	maxPriority int
	count       int
	excess      float64
}

func (c preemptCost) less(o preemptCost) bool {
	if c.maxPriority != o.maxPriority {
		return c.maxPriority < o.maxPriority
	}
	if c.count != o.count {
		return c.count < o.count
	}
	return c.excess < o.excess
}

// choosePreemption returns the node to place ask on by preempting, the
// allocations to evict there and the node's bin-pack score afterwards;
// node is nil when no node can free enough.
func (r *run) choosePreemption(nodes []*structs.Node, ask *structs.Resources) (*structs.Node, []*structs.Allocation, float64, error) {
	var (
		best      *structs.Node
		bestSet   []*structs.Allocation
		bestCost  preemptCost
		bestScore float64
	)
	for _, node := range nodes { // sorted by ID
		u, err := r.usage(node.ID)
		if err != nil {
			return nil, nil, 0, err
		}
		allocs := u.allocs
		cpuCap, memCap := nodeCapacity(node)
		var usedCPU, usedMem int64
		var cands []*structs.Allocation
		for _, a := range allocs {
			c, m := allocUsage(a)
			usedCPU += c
			usedMem += m
			if r.preemptible(a) {
				cands = append(cands, a)
			}
		}
		needCPU := usedCPU + int64(ask.CPU) - cpuCap
		needMem := usedMem + int64(ask.MemoryMB) - memCap
		set := selectPreemptions(cands, needCPU, needMem)
		if set == nil {
			continue
		}
		cost := setCost(set, needCPU, needMem, cpuCap, memCap)
		if best != nil && !cost.less(bestCost) {
			continue
		}
		evicted := map[string]bool{}
		for _, a := range set {
			evicted[a.ID] = true
		}
		remaining := []*structs.Allocation{{Resources: ask}}
		for _, a := range allocs {
			if !evicted[a.ID] {
				remaining = append(remaining, a)
			}
		}
		fit, _, score := AllocsFit(node, remaining)
		if !fit {
			continue
		}
		best, bestSet, bestCost, bestScore = node, set, cost, score
	}
	return best, bestSet, bestScore, nil
}

// preemptible reports whether the running job may evict a: it belongs to
// another job whose priority is low enough, and is not already leaving.
func (r *run) preemptible(a *structs.Allocation) bool {
	if a.Job == nil || a.TerminalStatus() {
		return false
	}
	if a.Namespace == r.job.Namespace && a.JobID == r.job.ID {
		return false
	}
	return a.Job.Priority <= r.job.Priority-structs.PreemptionPriorityDelta
}

// nodeCapacity returns what a node offers to allocations.
func nodeCapacity(node *structs.Node) (cpu, mem int64) {
	if nr := node.NodeResources; nr != nil {
		cpu, mem = nr.Cpu.CpuShares, nr.Memory.MemoryMB
	}
	if rr := node.ReservedResources; rr != nil {
		cpu -= int64(rr.Cpu.CpuShares)
		mem -= int64(rr.Memory.MemoryMB)
	}
	return cpu, mem
}

// selectPreemptions chooses, among cands, a set that frees at least
// needCPU MHz and needMem MB (either may be <= 0: nothing needed), lowest
// priorities first, then fewest allocations, then closest fit. It returns
// nil when even all of cands do not free enough. It is pure.
func selectPreemptions(cands []*structs.Allocation, needCPU, needMem int64) []*structs.Allocation {
	cands = append([]*structs.Allocation(nil), cands...)
	sort.SliceStable(cands, func(i, j int) bool {
		pi, pj := cands[i].Job.Priority, cands[j].Job.Priority
		if pi != pj {
			return pi < pj
		}
		if cands[i].CreateIndex != cands[j].CreateIndex {
			return cands[i].CreateIndex < cands[j].CreateIndex
		}
		return cands[i].ID < cands[j].ID
	})
	remCPU, remMem := needCPU, needMem
	satisfied := func() bool { return remCPU <= 0 && remMem <= 0 }
	chosen := map[int]bool{}
	var order []int
	for !satisfied() {
		// Only the lowest priority not yet exhausted is considered.
		level := -1
		for i, a := range cands {
			if !chosen[i] {
				level = a.Job.Priority
				break
			}
		}
		if level < 0 {
			return nil
		}
		pick := -1
		var pickExcess int64
		var pickCover float64
		for i, a := range cands {
			if chosen[i] || a.Job.Priority != level {
				continue
			}
			c, m := allocUsage(a)
			if c >= remCPU && m >= remMem {
				// Alone it covers the rest: prefer the closest fit.
				excess := max(c-max(remCPU, 0), 0) + max(m-max(remMem, 0), 0)
				if pick < 0 || pickCover < 2 || excess < pickExcess {
					pick, pickExcess, pickCover = i, excess, 2
				}
				continue
			}
			if pickCover >= 2 {
				continue
			}
			cover := coverage(c, remCPU) + coverage(m, remMem)
			if pick < 0 || cover > pickCover {
				pick, pickCover = i, cover
			}
		}
		if pick < 0 {
			return nil
		}
		chosen[pick] = true
		order = append(order, pick)
		c, m := allocUsage(cands[pick])
		remCPU -= c
		remMem -= m
	}
	// Drop what turned out unnecessary, latest (highest priority) first.
	for k := len(order) - 1; k >= 0; k-- {
		c, m := allocUsage(cands[order[k]])
		if remCPU+c <= 0 && remMem+m <= 0 {
			remCPU += c
			remMem += m
			chosen[order[k]] = false
		}
	}
	var out []*structs.Allocation
	for _, i := range order {
		if chosen[i] {
			out = append(out, cands[i])
		}
	}
	return out
}

// coverage is the share of need (when positive) that have covers, at most 1.
func coverage(have, need int64) float64 {
	if need <= 0 {
		return 0
	}
	return min(float64(have)/float64(need), 1)
}

// setCost rates a preemption set.
func setCost(set []*structs.Allocation, needCPU, needMem, cpuCap, memCap int64) preemptCost {
	c := preemptCost{count: len(set)}
	var cpu, mem int64
	for _, a := range set {
		c.maxPriority = max(c.maxPriority, a.Job.Priority)
		ac, am := allocUsage(a)
		cpu += ac
		mem += am
	}
	if cpuCap > 0 {
		c.excess += float64(cpu-max(needCPU, 0)) / float64(cpuCap)
	}
	if memCap > 0 {
		c.excess += float64(mem-max(needMem, 0)) / float64(memCap)
	}
	return c
}
