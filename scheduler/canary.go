package scheduler

import (
	"slices"

	"github.com/drover-io/drover/structs"
)

// Canary deployments.
//
// A service group whose update block sets canary = N does not replace its
// allocations of an older version at once: the deployment first places N
// canaries of the new version beside them (the old allocations keep
// running and the canaries do not count toward the group's count). Each
// canary carries DeploymentStatus.Canary and is listed in the group's
// DeploymentState.PlacedCanaries; it takes the name of one of the
// allocations it will replace. The deployment waits, unfinished, until
// the group is promoted: by hand (deployment promote), or here once every
// canary of every group is healthy and every group with canaries has
// auto_promote. Promoted canaries are ordinary allocations of the new
// version: each old allocation of the same name is stopped, and the rest
// of the group rolls max_parallel at a time. A canary found unhealthy
// fails the deployment (auto_revert then applies); canaries of a
// deployment that is no longer running are stopped. canary = count is a
// blue/green deployment: the whole new version runs beside the old one
// until promotion.

// descCanaryStopped is set on canaries whose deployment ended unpromoted.
const descCanaryStopped = "alloc not needed as its deployment ended before promotion"

// isCanary reports whether a was placed as a canary and not promoted yet
// (promotion clears the flag in the state store).
func isCanary(a *structs.Allocation) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary
}

// splitCanaries takes the group's canaries out of allocs: those of the
// current, active deployment whose group is not promoted are returned as
// live (they run beside the old version); those of any other deployment
// are stopped. A canary of a promoted group stays in others.
func (r *run) splitCanaries(tg *structs.TaskGroup, allocs []*structs.Allocation) (others, live []*structs.Allocation) {
	if !slices.ContainsFunc(allocs, isCanary) {
		return allocs, nil
	}
	if !r.loadDeployment() {
		return allocs, nil
	}
	r.autoPromote()
	dep := r.deps.current
	for _, a := range allocs {
		if !isCanary(a) {
			others = append(others, a)
			continue
		}
		switch {
		case dep == nil || a.DeploymentID != dep.ID:
			r.stopCanary(tg, a)
		case dep.TaskGroups[tg.Name] != nil && dep.TaskGroups[tg.Name].Promoted:
			others = append(others, a)
		case !dep.Active():
			r.stopCanary(tg, a)
		default:
			live = append(live, a)
		}
	}
	return others, live
}

// stopCanary stops a canary the deployment no longer wants.
func (r *run) stopCanary(tg *structs.TaskGroup, a *structs.Allocation) {
	if a.ServerTerminalStatus() {
		return
	}
	r.plan.AppendStop(a, descCanaryStopped, r.now)
	r.plan.desired(tg.Name).Stop++
}

// autoPromote promotes the current deployment, once per run, when it is
// running, every group with unpromoted canaries has auto_promote, and
// every such group has its desired canaries placed and healthy.
func (r *run) autoPromote() {
	d := &r.deps
	if d.promoteChecked {
		return
	}
	d.promoteChecked = true
	dep := d.current
	if dep == nil || dep.Status != structs.DeploymentStatusRunning {
		return
	}
	var groups []*structs.DeploymentState
	for _, st := range dep.TaskGroups {
		if !st.HasCanaries() {
			continue
		}
		if !st.AutoPromote || r.healthyCanaries(st) < st.DesiredCanaries {
			return
		}
		groups = append(groups, st)
	}
	for _, st := range groups {
		st.Promoted = true
		if st.ProgressDeadline > 0 {
			st.RequireProgressBy = r.nowTime().Add(st.ProgressDeadline)
		}
	}
}

// healthyCanaries counts the group's placed canaries the client found
// healthy.
func (r *run) healthyCanaries(st *structs.DeploymentState) int {
	n := 0
	for _, a := range r.allocs {
		if slices.Contains(st.PlacedCanaries, a.ID) && a.DeploymentStatus.IsHealthy() && !a.TerminalStatus() {
			n++
		}
	}
	return n
}

// canaryIndexes returns the indexes the canaries still to place take:
// first those of the old allocations they will replace (destructive, in
// index order), then the lowest free ones; none already taken by a live
// canary.
func canaryIndexes(need int, destructive, live []*structs.Allocation) []int {
	if need <= 0 {
		return nil
	}
	taken := map[int]bool{}
	for _, a := range live {
		taken[a.Index()] = true
	}
	var out []int
	for _, a := range destructive {
		if len(out) == need {
			return out
		}
		if idx := a.Index(); !taken[idx] {
			taken[idx] = true
			out = append(out, idx)
		}
	}
	for idx := 0; len(out) < need; idx++ {
		if !taken[idx] {
			taken[idx] = true
			out = append(out, idx)
		}
	}
	return out
}
