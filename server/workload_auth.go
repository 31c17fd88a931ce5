package server

import (
	"github.com/drover-io/drover/structs"
)

// authorizeWorkload is the implicit policy of a workload identity (as
// Nomad's): a task may read, in its own namespace, the variables at
// nomad/jobs, nomad/jobs/<job>, nomad/jobs/<job>/<group> and
// nomad/jobs/<job>/<group>/<task> (structs.WorkloadMayReadVariable), and
// the services of its namespace; nothing else. claims come from
// VerifyIdentity. ACL policies attached to workloads (acl helper) may
// grant more; they are checked before this, by the caller.
//
// Services: Nomad's implicit policy lets a task read every service of its
// namespace (that is how nomadService templates discover other jobs), so
// Drover does the same rather than only its own job's.
func authorizeWorkload(claims *structs.IdentityClaims, op structs.WorkloadOp) error {
	if claims == nil {
		return permissionDenied("no workload identity")
	}
	ns := op.Namespace
	if ns == "" {
		ns = claims.Namespace
	}
	switch op.Kind {
	case structs.WorkloadOpVariableRead:
		if structs.WorkloadMayReadVariable(claims.Workload(), ns, op.Path) {
			return nil
		}
	case structs.WorkloadOpVariableList:
		// A list is filtered to what the task may read; only its own
		// namespace may be listed.
		if ns == claims.Namespace {
			return nil
		}
	case structs.WorkloadOpServiceRead:
		if ns == claims.Namespace {
			return nil
		}
	}
	return permissionDenied("the workload identity of task %q of job %q (namespace %q) may not do %s", claims.Task, claims.JobID, claims.Namespace, op)
}
