package scheduler

import (
	"fmt"

	"github.com/drover-io/drover/structs"
)

// system reconciles a system or sysbatch job: one allocation of each group
// on every ready node that is in the job's datacenters and meets its
// constraints. A sysbatch allocation that finished (complete or failed)
// for the current job version is done and is not placed again; a new
// version runs again everywhere.
func (r *run) system() error {
	sysbatch := r.job.Type == structs.JobTypeSysBatch
	nodes := r.candidateNodes()
	ready := map[string]*structs.Node{}
	for _, n := range nodes {
		ready[n.ID] = n
	}
	for _, tg := range r.job.TaskGroups {
		// Existing allocations of the group, by node, that stay.
		kept := map[string]bool{}
		freed := map[string]*structs.Allocation{}
		for _, a := range r.allocs {
			if a.ServerTerminalStatus() {
				continue
			}
			if a.TaskGroup != tg.Name {
				if r.job.LookupTaskGroup(a.TaskGroup) == nil && tg == r.job.TaskGroups[0] {
					r.plan.AppendStop(a, descNotNeeded, r.now)
				}
				continue
			}
			stop, desc, err := r.systemStop(a, tg, ready)
			if err != nil {
				return err
			}
			du := r.plan.desired(tg.Name)
			switch {
			case stop && desc == descUpdating:
				r.plan.AppendStop(a, desc, r.now)
				freed[a.NodeID] = a
				du.DestructiveUpdate++
			case stop:
				r.plan.AppendStop(a, desc, r.now)
				freed[a.NodeID] = a
				du.Stop++
			case a.ClientTerminalStatus() && (r.oldVersion(a) || (!sysbatch && a.ClientStatus == structs.AllocClientStatusComplete)):
				freed[a.NodeID] = a
			case kept[a.NodeID]:
				r.plan.AppendStop(a, descNotNeeded, r.now)
				du.Stop++
			default:
				kept[a.NodeID] = true
				if !a.ClientTerminalStatus() && r.oldVersion(a) {
					r.updateInPlace(a, a.DeploymentID)
					du.InPlaceUpdate++
				} else {
					du.Ignore++
				}
			}
		}
		p, err := r.newPlacer(tg, 0)
		if err != nil {
			return err
		}
		for _, node := range nodes {
			if kept[node.ID] {
				continue
			}
			probe := r.freshMetric()
			if !r.feasible(node, tg, probe) {
				continue // not a node for this job: no failure
			}
			if p.blocked(node) != "" {
				continue // distinct_property filters it, as a constraint would
			}
			name := structs.AllocName(r.job.ID, tg.Name, 0)
			if prev := freed[node.ID]; prev == nil || prev.DesiredDescription != descUpdating {
				r.plan.desired(tg.Name).Place++
			}
			if err := p.placeOn(node, name, freed[node.ID]); err != nil {
				return err
			}
		}
	}
	return nil
}

// systemStop decides whether an existing allocation of a system job must
// stop, and why.
func (r *run) systemStop(a *structs.Allocation, tg *structs.TaskGroup, ready map[string]*structs.Node) (bool, string, error) {
	if a.ClientStatus == structs.AllocClientStatusLost {
		return true, descLost, nil
	}
	if node, ok := ready[a.NodeID]; ok {
		if !r.feasible(node, tg, &structs.AllocMetric{}) {
			return true, descNodeGone, nil
		}
	} else {
		node, err := r.state.NodeByID(a.NodeID)
		if err != nil {
			return false, "", fmt.Errorf("read node %q: %w", a.NodeID, err)
		}
		// A draining node keeps its system allocations until the drain
		// marks them to migrate, after the other jobs' (drains stop
		// system jobs last).
		if node == nil || node.Status == structs.NodeStatusDown || (node.Drain && a.DesiredTransition.ShouldMigrate()) ||
			!inDatacenters(node.Datacenter, r.job.Datacenters) || !structs.InNodePool(node.NodePool, r.job.NodePool) {
			return true, descNodeGone, nil
		}
	}
	if !a.ClientTerminalStatus() && r.oldVersion(a) && r.destructive(a) {
		return true, descUpdating, nil
	}
	return false, "", nil
}
