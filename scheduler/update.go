package scheduler

import (
	"maps"
	"reflect"

	"github.com/drover-io/drover/structs"
)

// tasksUpdated reports whether moving an allocation of group old to group
// new needs a new allocation (a destructive update) rather than an
// in-place one. It is pure.
//
// Destructive: the set of tasks, or any task's driver, config, env, user,
// resources, lifecycle, kill timeout or signal, leader flag, log config,
// restart policy, constraints, affinities, artifacts, volume mounts or
// templates; the group's constraints, affinities, spreads, restart policy,
// ephemeral disk, network or volume blocks (a placement preference that
// changed is honoured by placing again, as Nomad does); and meta at any
// level,
// because meta reaches the task's environment as NOMAD_META_* variables,
// which a running process cannot see change (Nomad decides the same).
//
// In place: the group's count (it changes how many allocations there are,
// not what each runs), its update strategy, and service blocks at either
// level (the client's service hook registers the new version's services
// and restarts changed checks without touching the tasks, as Nomad; see
// servicesUpdated for how such an update rolls). Job-level changes that do
// not reach the tasks (priority, all_at_once, the job's update block) are
// judged by jobUpdated.
func tasksUpdated(old, new *structs.TaskGroup) bool {
	if old == nil || new == nil {
		return old != new
	}
	if len(old.Tasks) != len(new.Tasks) {
		return true
	}
	if !reflect.DeepEqual(old.Constraints, new.Constraints) ||
		!reflect.DeepEqual(old.Affinities, new.Affinities) ||
		!reflect.DeepEqual(old.Spreads, new.Spreads) ||
		!reflect.DeepEqual(old.RestartPolicy, new.RestartPolicy) ||
		!reflect.DeepEqual(old.EphemeralDisk, new.EphemeralDisk) ||
		!reflect.DeepEqual(old.Networks, new.Networks) ||
		!reflect.DeepEqual(old.Volumes, new.Volumes) ||
		!metaEqual(old.Meta, new.Meta) {
		return true
	}
	for _, ot := range old.Tasks {
		nt := new.LookupTask(ot.Name)
		if nt == nil || taskUpdated(ot, nt) {
			return true
		}
	}
	return false
}

// taskUpdated reports whether a task changed in a way that needs a restart.
func taskUpdated(o, n *structs.Task) bool {
	return o.Driver != n.Driver ||
		o.User != n.User ||
		o.KillTimeout != n.KillTimeout ||
		o.KillSignal != n.KillSignal ||
		o.Leader != n.Leader ||
		!reflect.DeepEqual(o.Config, n.Config) ||
		!metaEqual(o.Env, n.Env) ||
		!metaEqual(o.Meta, n.Meta) ||
		!reflect.DeepEqual(o.Resources, n.Resources) ||
		!reflect.DeepEqual(o.Lifecycle, n.Lifecycle) ||
		!reflect.DeepEqual(o.LogConfig, n.LogConfig) ||
		!reflect.DeepEqual(o.RestartPolicy, n.RestartPolicy) ||
		!reflect.DeepEqual(o.Constraints, n.Constraints) ||
		!reflect.DeepEqual(o.Affinities, n.Affinities) ||
		!reflect.DeepEqual(o.Artifacts, n.Artifacts) ||
		!reflect.DeepEqual(o.VolumeMounts, n.VolumeMounts) ||
		!reflect.DeepEqual(o.Templates, n.Templates) ||
		!reflect.DeepEqual(o.Identity, n.Identity) ||
		!reflect.DeepEqual(o.Identities, n.Identities)
}

// servicesUpdated reports whether an in-place update from group old to
// group new changes the services the client registers or the checks it
// runs (at group or task level). Such an update changes what decides the
// allocation's health, so under a rolling update strategy it is rolled
// out like a destructive one, MaxParallel at a time, each batch waiting
// for the previous one's new health: a new check that fails holds the
// rest back. It is pure; tasks are matched by name (tasksUpdated already
// requires the same set).
func servicesUpdated(old, new *structs.TaskGroup) bool {
	if old == nil || new == nil {
		return old != new
	}
	if !reflect.DeepEqual(old.Services, new.Services) {
		return true
	}
	for _, ot := range old.Tasks {
		if nt := new.LookupTask(ot.Name); nt == nil || !reflect.DeepEqual(ot.Services, nt.Services) {
			return true
		}
	}
	return false
}

// metaEqual compares string maps, nil equal to empty.
func metaEqual(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// jobUpdated reports whether job-level changes force a destructive update
// of every group: meta (it reaches the tasks' environment), constraints
// and datacenters (the node may no longer qualify), affinities and
// spreads (placed again to honour them), and the node pool. Priority,
// all_at_once and the update block are applied in place.
func jobUpdated(old, new *structs.Job) bool {
	return !metaEqual(old.Meta, new.Meta) ||
		!reflect.DeepEqual(old.Constraints, new.Constraints) ||
		!reflect.DeepEqual(old.Affinities, new.Affinities) ||
		!reflect.DeepEqual(old.Spreads, new.Spreads) ||
		!reflect.DeepEqual(old.Datacenters, new.Datacenters) ||
		structs.NodePoolName(old.NodePool) != structs.NodePoolName(new.NodePool)
}
