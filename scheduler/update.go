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
// restart policy, constraints, affinities, artifacts, volume mounts,
// templates or services; the group's constraints, affinities, spreads,
// restart policy, ephemeral disk, network, volume or service blocks (a
// placement preference that changed is honoured by placing again, as
// Nomad does; a changed service block places the allocation again, where
// Nomad updates in place, because an in-place update does not yet take
// part in the job's deployment: a new check that fails must hold the
// rollout back); and meta at any level,
// because meta reaches the task's environment as NOMAD_META_* variables,
// which a running process cannot see change (Nomad decides the same).
//
// In place: the group's count (it changes how many allocations there are,
// not what each runs) and its update strategy. Job-level changes that do
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
		!reflect.DeepEqual(old.Services, new.Services) ||
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
		!reflect.DeepEqual(o.Services, n.Services) ||
		!reflect.DeepEqual(o.Templates, n.Templates) ||
		!reflect.DeepEqual(o.Identity, n.Identity) ||
		!reflect.DeepEqual(o.Identities, n.Identities)
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
