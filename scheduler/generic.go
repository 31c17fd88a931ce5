package scheduler

import (
	"slices"
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
	r.finishDeployment()
	return nil
}

func (r *run) reconcileGroup(tg *structs.TaskGroup, allocs []*structs.Allocation) error {
	all := allocs
	allocs, canaries := r.splitCanaries(tg, allocs) // canary.go
	batch := r.job.Type == structs.JobTypeBatch
	du := r.plan.desired(tg.Name)
	kept := map[int]*structs.Allocation{}
	freed := map[int]*structs.Allocation{} // replaced allocations, by index
	var keptOrder []*structs.Allocation
	var destructive []*structs.Allocation // running an old version that must be replaced
	if tg.Disconnect != nil {
		// A node that came back may run an allocation whose replacement
		// runs too: the one its reconcile strategy prefers comes first
		// and keeps the index; the other is stopped as a duplicate.
		allocs = reconnectOrder(allocs, tg.Disconnect.Reconcile)
	}
	for _, a := range allocs {
		idx := a.Index()
		kind, at, delay := r.rescheduleDecision(tg, a)
		switch {
		case a.ClientStatus == structs.AllocClientStatusFailed && a.NextAllocation != "":
			// Already replaced by a reschedule.
			continue
		case kind == rescheduleNow:
			r.rescheduling[a.ID] = delay
			freed[idx] = a
			continue
		case kind == rescheduleLater:
			// Holds its index until the follow-up evaluation replaces it.
			r.rescheduleLater(a, at)
		case a.ClientStatus == structs.AllocClientStatusLost:
			r.plan.AppendStop(a, descLost, r.now)
			freed[idx] = a
			continue
		case a.ClientStatus == structs.AllocClientStatusUnknown:
			// Its node is disconnected: it may still run. Replaced
			// meanwhile only when the disconnect block says so; never
			// stopped (nobody could tell it).
			if tg.Disconnect != nil && tg.Disconnect.Replace {
				// Not its previous allocation: a client waits for a
				// previous allocation to finish before it starts the
				// next, and this one may never be heard of again.
				continue
			}
		case a.DesiredTransition.ShouldMigrate() && !a.ClientTerminalStatus():
			// A drain moves it off its node: stop it there and place
			// its replacement elsewhere (the draining node is not
			// eligible), which follows it as its previous allocation.
			r.plan.AppendStop(a, descMigrating, r.now)
			freed[idx] = a
			du.Migrate++
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
			// A batch alloc that completed is done; a failed one whose
			// policy allows no more reschedules stays failed.
		case r.oldVersion(a) && r.destructive(a):
			if _, dup := kept[idx]; !dup && idx >= 0 {
				destructive = append(destructive, a)
			}
		}
		if prevA, dup := kept[idx]; dup && r.oldVersion(prevA) && !r.oldVersion(a) && !a.ClientTerminalStatus() {
			// A promoted canary took the name of an old allocation,
			// which it replaces.
			if !prevA.ClientTerminalStatus() {
				r.plan.AppendStop(prevA, descUpdating, r.now)
				du.DestructiveUpdate++
			}
			kept[idx] = a
			keptOrder[slices.Index(keptOrder, prevA)] = a
			continue
		}
		if _, dup := kept[idx]; dup || idx < 0 {
			if !a.ClientTerminalStatus() {
				r.plan.AppendStop(a, descNotNeeded, r.now)
				du.Stop++
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
			du.Stop++
		}
		delete(kept, a.Index())
	}
	stillKept := func(a *structs.Allocation) bool { return kept[a.Index()] == a }
	destructive = slicesFilter(destructive, stillKept)
	sort.Slice(destructive, func(i, j int) bool { return destructive[i].Index() < destructive[j].Index() })

	// In-place updates that change the services or checks (which decide
	// the allocation's health) roll like destructive ones under a
	// deployment (servicesUpdated); the others are applied at once.
	var rolled []*structs.Allocation
	for _, a := range keptOrder[excess:] {
		if !a.ClientTerminalStatus() && r.oldVersion(a) && !r.destructive(a) && r.servicesChanged(a) {
			rolled = append(rolled, a)
		}
	}
	sort.Slice(rolled, func(i, j int) bool { return rolled[i].Index() < rolled[j].Index() })

	// Destructive updates: all at once, or MaxParallel at a time under a
	// deployment whose next batch waits for the previous one's health. A
	// version that no allocation runs yet (a service's first version, say)
	// gets a deployment too, which follows its placements' health.
	replace := destructive
	inPlaceHeld := map[*structs.Allocation]bool{} // rolled, waiting for a later batch
	var dep *structs.Deployment
	var depState *structs.DeploymentState
	var canaryIdx []int
	if r.rolling(tg) {
		wantCanaries := tg.Update.Canary > 0 && (len(destructive) > 0 || len(canaries) > 0)
		needed := len(destructive) > 0 || len(rolled) > 0 || len(canaries) > 0 || (tg.Count > 0 && !r.hasCurrentAlloc(tg.Name))
		dep, depState = r.deploymentFor(tg, needed)
		if dep != nil && wantCanaries && dep.Active() && depState.PlacedAllocs == 0 && depState.DesiredCanaries == 0 && !depState.Promoted {
			// A new deployment of the group starts with its canaries.
			depState.DesiredCanaries = tg.Update.Canary
		}
		switch {
		case dep != nil && depState.HasCanaries():
			// Canary phase: nothing is replaced until promotion.
			r.rollingBatch(tg, dep, depState, all, nil)
			replace = nil
			for _, a := range rolled {
				inPlaceHeld[a] = true
			}
			if !dep.Active() {
				for _, a := range canaries {
					r.stopCanary(tg, a)
				}
				break
			}
			r.deps.pending = true
			if dep.Status == structs.DeploymentStatusRunning { // paused: no new canary either
				canaryIdx = canaryIndexes(depState.DesiredCanaries-len(depState.PlacedCanaries), destructive, canaries)
			}
		case dep != nil:
			// One MaxParallel budget for both kinds of update, in index
			// order.
			candidates := append(append([]*structs.Allocation(nil), destructive...), rolled...)
			sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Index() < candidates[j].Index() })
			batch := r.rollingBatch(tg, dep, depState, all, candidates)
			inBatch := map[*structs.Allocation]bool{}
			for _, a := range batch {
				inBatch[a] = true
			}
			replace = slicesFilter(destructive, func(a *structs.Allocation) bool { return inBatch[a] })
			for _, a := range rolled {
				if !inBatch[a] {
					inPlaceHeld[a] = true
				}
			}
		}
	}
	deploymentID := ""
	if dep != nil && dep.Active() {
		// Every placement and in-place update of the version joins its
		// deployment.
		deploymentID = dep.ID
	}
	replacing := map[*structs.Allocation]bool{}
	for _, a := range replace {
		replacing[a] = true
		r.plan.AppendStop(a, descUpdating, r.now)
		freed[a.Index()] = a
		delete(kept, a.Index())
		du.DestructiveUpdate++
	}
	// The rest move to the current job version where they run.
	for _, a := range keptOrder[excess:] {
		switch {
		case replacing[a]:
		case a.ClientTerminalStatus():
			du.Ignore++
		case r.oldVersion(a) && !r.destructive(a) && inPlaceHeld[a]:
			du.Ignore++
		case r.oldVersion(a) && !r.destructive(a):
			r.updateInPlace(a, deploymentID)
			du.InPlaceUpdate++
			if deploymentID != "" {
				// rollingBatch counted the rolled ones; the deployment
				// waits for the new health of every one.
				if !slices.Contains(rolled, a) {
					depState.PlacedAllocs++
				}
				r.deps.pending = true
			}
		default:
			du.Ignore++
		}
	}

	missing := max(tg.Count-len(kept), 0)
	if missing == 0 && len(canaryIdx) == 0 {
		return nil
	}
	p, err := r.newPlacer(tg, missing+len(canaryIdx))
	if err != nil {
		return err
	}
	for idx := 0; missing > 0; idx++ {
		if _, ok := kept[idx]; ok {
			continue
		}
		missing--
		prev := freed[idx]
		replacement := prev != nil && replacing[prev]
		if !replacement {
			du.Place++
		}
		placed, err := p.place(structs.AllocName(r.job.ID, tg.Name, idx), prev, deploymentID, true)
		if err != nil {
			return err
		}
		if placed && deploymentID != "" && !replacement {
			depState.PlacedAllocs++ // rollingBatch counted the replacements
		}
	}
	if err := r.placeCanaries(p, tg, dep, depState, canaryIdx); err != nil {
		return err
	}
	if dep != nil && dep.Active() {
		// The deployment waits for what was placed now, or for room to
		// place what could not be (until its progress deadline).
		r.deps.pending = true
	}
	return nil
}

// placeCanaries places the group's canaries still missing, with the
// names of the given indexes (canary.go).
func (r *run) placeCanaries(p *placer, tg *structs.TaskGroup, dep *structs.Deployment, st *structs.DeploymentState, indexes []int) error {
	if len(indexes) == 0 {
		return nil
	}
	r.canary = st
	defer func() { r.canary = nil }()
	for _, idx := range indexes {
		placed, err := p.place(structs.AllocName(r.job.ID, tg.Name, idx), nil, dep.ID, true)
		if err != nil {
			return err
		}
		if placed {
			st.PlacedAllocs++
			r.plan.desired(tg.Name).Canary++
		}
	}
	return nil
}

// hasCurrentAlloc reports whether group has an allocation of the current
// job version, in any state.
func (r *run) hasCurrentAlloc(group string) bool {
	for _, a := range r.allocs {
		if a.TaskGroup == group && !r.oldVersion(a) {
			return true
		}
	}
	return false
}

// slicesFilter returns the elements of s for which keep is true.
func slicesFilter[T any](s []T, keep func(T) bool) []T {
	var out []T
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// reconnectOrder sorts a group's allocations so that, of two holding the
// same index (an allocation of a node that reconnected and its
// replacement), the one the reconcile strategy keeps comes first:
// keep_replacement the newer, longest_running the one whose tasks started
// first, keep_original and best_score (drover does not compare placement
// scores across nodes) the original. Unknown allocations, which cannot be
// stopped, come last.
func reconnectOrder(allocs []*structs.Allocation, reconcile string) []*structs.Allocation {
	out := append([]*structs.Allocation(nil), allocs...)
	started := func(a *structs.Allocation) int64 {
		var first int64
		for _, ts := range a.TaskStates {
			if ts != nil && !ts.StartedAt.IsZero() && (first == 0 || ts.StartedAt.UnixNano() < first) {
				first = ts.StartedAt.UnixNano()
			}
		}
		if first == 0 {
			return 1<<63 - 1
		}
		return first
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ua, ub := a.ClientStatus == structs.AllocClientStatusUnknown, b.ClientStatus == structs.AllocClientStatusUnknown
		if ua != ub {
			return ub
		}
		switch reconcile {
		case structs.ReconcileKeepReplacement:
			return a.CreateIndex > b.CreateIndex
		case structs.ReconcileLongestRunning:
			if sa, sb := started(a), started(b); sa != sb {
				return sa < sb
			}
		}
		return a.CreateIndex < b.CreateIndex
	})
	return out
}
