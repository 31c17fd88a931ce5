package scheduler

import (
	"regexp"
	"sort"

	"github.com/drover-io/drover/structs"
)

// Metric keys of device placement failures. A node without a device group
// the request names, or whose groups all fail the request's constraints, is
// filtered ("missing devices: nvidia/gpu", "devices: nvidia/gpu:
// ${device.attr.memory} >= 8 GiB"); a node whose matching groups lack enough
// healthy, unallocated instances is exhausted ("devices: nvidia/gpu").
const (
	deviceMissingPrefix = "missing devices: "
	devicePrefix        = "devices: "
)

// deviceFailure says why a node cannot give a group its devices: one of the
// two keys is set.
type deviceFailure struct {
	filtered  string // a ConstraintFiltered key
	exhausted string // a DimensionExhausted key
}

func (f deviceFailure) failed() bool { return f.filtered != "" || f.exhausted != "" }

// record counts the failure in metric.
func (f deviceFailure) record(metric *structs.AllocMetric) {
	if f.filtered != "" {
		metric.NodesFiltered++
		if metric.ConstraintFiltered == nil {
			metric.ConstraintFiltered = map[string]int{}
		}
		metric.ConstraintFiltered[f.filtered]++
		return
	}
	metric.NodesExhausted++
	if metric.DimensionExhausted == nil {
		metric.DimensionExhausted = map[string]int{}
	}
	metric.DimensionExhausted[f.exhausted]++
}

// requestsDevices reports whether any task of tg asks for devices.
func requestsDevices(tg *structs.TaskGroup) bool {
	for _, t := range tg.Tasks {
		if t.Resources != nil && len(t.Resources.Devices) > 0 {
			return true
		}
	}
	return false
}

// instanceKey identifies a device instance on a node.
func instanceKey(group, id string) string { return group + "\x00" + id }

// usedInstances returns the instances allocs hold on their node.
func usedInstances(allocs []*structs.Allocation) map[string]bool {
	used := map[string]bool{}
	for _, a := range allocs {
		if a.AllocatedResources == nil {
			continue
		}
		for _, tr := range a.AllocatedResources.Tasks {
			if tr == nil {
				continue
			}
			for _, d := range tr.Devices {
				for _, id := range d.DeviceIDs {
					used[instanceKey(d.ID().String(), id)] = true
				}
			}
		}
	}
	return used
}

// assignDevices chooses, for every device request of tg's tasks, healthy
// instances of node that allocs (the node's proposed allocations) do not
// hold. Among the groups that match a request, satisfy its constraints and
// have enough free instances, it picks the one its affinities score highest
// (ties: the first by vendor/type/name), and within it the free instances in
// ID order. It returns the assignment by task, the mean affinity score of
// the requests that have affinities (in [-1, 1]; 0 without any), or why the
// node cannot take the group.
func assignDevices(node *structs.Node, allocs []*structs.Allocation, tg *structs.TaskGroup, regexps map[string]*regexp.Regexp) (map[string][]*structs.AllocatedDeviceResource, float64, deviceFailure) {
	if regexps == nil {
		regexps = map[string]*regexp.Regexp{}
	}
	if !requestsDevices(tg) {
		return nil, 0, deviceFailure{}
	}
	var groups []*structs.NodeDeviceResource
	if node.NodeResources != nil {
		groups = append(groups, node.NodeResources.Devices...)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].ID().String() < groups[j].ID().String() })
	used := usedInstances(allocs)
	out := map[string][]*structs.AllocatedDeviceResource{}
	var scoreSum float64
	scored := 0
	for _, t := range tg.Tasks {
		if t.Resources == nil {
			continue
		}
		for _, req := range t.Resources.Devices {
			count := int(max(req.Count, 1))
			tuple := req.ID()
			var best *structs.NodeDeviceResource
			var bestFree []string
			bestScore, matched, passed := 0.0, false, false
			var firstFailed *structs.Constraint
			for _, g := range groups {
				if !g.ID().Matches(tuple) {
					continue
				}
				matched = true
				if c := failedConstraint(req.Constraints, g, regexps); c != nil {
					if firstFailed == nil {
						firstFailed = c
					}
					continue
				}
				passed = true
				free := freeInstances(g, used)
				if len(free) < count {
					continue
				}
				score := affinityScore(req.Affinities, g, regexps)
				if best == nil || score > bestScore {
					best, bestFree, bestScore = g, free, score
				}
			}
			switch {
			case !matched:
				return nil, 0, deviceFailure{filtered: deviceMissingPrefix + req.Name}
			case !passed:
				return nil, 0, deviceFailure{filtered: devicePrefix + req.Name + ": " + firstFailed.String()}
			case best == nil:
				return nil, 0, deviceFailure{exhausted: devicePrefix + req.Name}
			}
			ids := bestFree[:count]
			for _, id := range ids {
				used[instanceKey(best.ID().String(), id)] = true
			}
			out[t.Name] = append(out[t.Name], &structs.AllocatedDeviceResource{
				Vendor: best.Vendor, Type: best.Type, Name: best.Name, DeviceIDs: append([]string(nil), ids...)})
			if len(req.Affinities) > 0 {
				scoreSum += bestScore
				scored++
			}
		}
	}
	if scored == 0 {
		return out, 0, deviceFailure{}
	}
	return out, scoreSum / float64(scored), deviceFailure{}
}

// failedConstraint returns the first of cs that g does not satisfy.
func failedConstraint(cs []*structs.Constraint, g *structs.NodeDeviceResource, regexps map[string]*regexp.Regexp) *structs.Constraint {
	for _, c := range cs {
		if !deviceMeets(c, g, regexps) {
			return c
		}
	}
	return nil
}

// freeInstances returns g's healthy instances not in used, by ID.
func freeInstances(g *structs.NodeDeviceResource, used map[string]bool) []string {
	var free []string
	for _, d := range g.Instances {
		if d.Healthy && !used[instanceKey(g.ID().String(), d.ID)] {
			free = append(free, d.ID)
		}
	}
	sort.Strings(free)
	return free
}

// affinityScore is the weight of the affinities g matches over the total
// weight, in [-1, 1].
func affinityScore(as []*structs.Affinity, g *structs.NodeDeviceResource, regexps map[string]*regexp.Regexp) float64 {
	var sum, total float64
	for _, a := range as {
		w := float64(a.Weight)
		if w < 0 {
			total -= w
		} else {
			total += w
		}
		if deviceMeets(&structs.Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand}, g, regexps) {
			sum += w
		}
	}
	if total == 0 {
		return 0
	}
	return sum / total
}

// withDevices returns a copy of allocated with each task's devices set.
func withDevices(allocated *structs.AllocatedResources, devices map[string][]*structs.AllocatedDeviceResource) *structs.AllocatedResources {
	if len(devices) == 0 || allocated == nil {
		return allocated
	}
	c := *allocated
	c.Tasks = make(map[string]*structs.AllocatedTaskResources, len(allocated.Tasks))
	for name, tr := range allocated.Tasks {
		if d, ok := devices[name]; ok && tr != nil {
			trc := *tr
			trc.Devices = d
			tr = &trc
		}
		c.Tasks[name] = tr
	}
	return &c
}

// DevicesFit reports whether no device instance is held twice by allocs
// (the proposed allocations of one node); when one is, reason names it. The
// plan applier uses it, with AllocsFit, to re-check a plan against the
// latest state, so that two schedulers never hand out the same instance.
// Whether an instance still exists is the scheduler's check at placement: an
// allocation already running keeps its instance even if the device is gone.
func DevicesFit(allocs []*structs.Allocation) (fit bool, reason string) {
	seen := map[string]bool{}
	for _, a := range allocs {
		if a.AllocatedResources == nil {
			continue
		}
		for _, tr := range a.AllocatedResources.Tasks {
			if tr == nil {
				continue
			}
			for _, d := range tr.Devices {
				for _, id := range d.DeviceIDs {
					k := instanceKey(d.ID().String(), id)
					if seen[k] {
						return false, devicePrefix + d.ID().String() + ": instance " + id + " allocated twice"
					}
					seen[k] = true
				}
			}
		}
	}
	return true, ""
}
