package scheduler

import (
	"sort"

	"github.com/drover-io/drover/structs"
)

// generic reconciles a service or batch job: per group, keep the
// allocations that are current, stop the ones that are not needed, and
// place the missing ones by bin-packing.
func (r *run) generic() error {
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range r.allocs {
		if a.ServerTerminalStatus() {
			continue
		}
		if r.job.LookupTaskGroup(a.TaskGroup) == nil {
			r.plan.AppendStop(a, descNotNeeded, r.now)
			continue
		}
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	for _, tg := range r.job.TaskGroups {
		if err := r.reconcileGroup(tg, byGroup[tg.Name]); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) reconcileGroup(tg *structs.TaskGroup, allocs []*structs.Allocation) error {
	batch := r.job.Type == structs.JobTypeBatch
	kept := map[int]*structs.Allocation{}
	freed := map[int]*structs.Allocation{} // replaced allocations, by index
	var keptOrder []*structs.Allocation
	for _, a := range allocs {
		idx := a.Index()
		switch {
		case a.ClientStatus == structs.AllocClientStatusLost:
			r.plan.AppendStop(a, descLost, r.now)
			freed[idx] = a
			continue
		case a.ClientTerminalStatus():
			if r.oldVersion(a) {
				continue
			}
			if a.ClientStatus == structs.AllocClientStatusComplete && !batch {
				// A service is meant to run: a finished one is replaced.
				freed[idx] = a
				continue
			}
			// A batch alloc that completed is done; a failed one waits for
			// rescheduling, which is not implemented yet.
		case r.oldVersion(a) && r.destructive(a):
			r.plan.AppendStop(a, descUpdating, r.now)
			freed[idx] = a
			continue
		}
		if _, dup := kept[idx]; dup || idx < 0 {
			if !a.ClientTerminalStatus() {
				r.plan.AppendStop(a, descNotNeeded, r.now)
			}
			continue
		}
		kept[idx] = a
		keptOrder = append(keptOrder, a)
	}

	// Too many: stop the highest indexes first.
	sort.Slice(keptOrder, func(i, j int) bool { return keptOrder[i].Index() > keptOrder[j].Index() })
	excess := max(len(keptOrder)-tg.Count, 0)
	for _, a := range keptOrder[:excess] {
		if !a.ClientTerminalStatus() {
			r.plan.AppendStop(a, descNotNeeded, r.now)
		}
		delete(kept, a.Index())
	}
	// The rest move to the current job version where they run.
	for _, a := range keptOrder[excess:] {
		if !a.ClientTerminalStatus() && r.oldVersion(a) {
			r.updateInPlace(a)
		}
	}

	missing := tg.Count - len(kept)
	if missing <= 0 {
		return nil
	}
	pool := &structs.AllocMetric{}
	nodes := r.candidates(pool)
	for idx := 0; missing > 0; idx++ {
		if _, ok := kept[idx]; ok {
			continue
		}
		missing--
		if err := r.place(tg, structs.AllocName(r.job.ID, tg.Name, idx), freed[idx], nodes, freshMetric(pool), true); err != nil {
			return err
		}
	}
	return nil
}

// freshMetric returns a metric carrying only the pool counts of m.
func freshMetric(m *structs.AllocMetric) *structs.AllocMetric {
	c := &structs.AllocMetric{NodesInPool: m.NodesInPool}
	if m.NodesAvailable != nil {
		c.NodesAvailable = make(map[string]int, len(m.NodesAvailable))
		for k, v := range m.NodesAvailable {
			c.NodesAvailable[k] = v
		}
	}
	return c
}
