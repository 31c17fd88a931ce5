package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of drains, eligibility and the servers' garbage collection.
var (
	// NodeUpdateDrain starts or stops a node's drain. Idempotent: asking
	// again sets the same drain (its deadline counted from the repeat).
	NodeUpdateDrain = idempotent[structs.NodeUpdateDrainRequest, structs.NodeDrainUpdateResponse]("NodeUpdateDrain")
	// NodeUpdateEligibility sets a node's scheduling eligibility.
	// Idempotent: setting it again changes nothing.
	NodeUpdateEligibility = idempotent[structs.NodeUpdateEligibilityRequest, structs.NodeDrainUpdateResponse]("NodeUpdateEligibility")
	// SystemGC collects every dead job, terminal evaluation and
	// allocation, finished deployment and down node without work now,
	// whatever its age. Idempotent: a second run finds less.
	SystemGC = idempotent[structs.SystemRequest, structs.GenericResponse]("SystemGC")
	// SystemReconcileSummaries recomputes every job's summary.
	// Idempotent.
	SystemReconcileSummaries = idempotent[structs.SystemRequest, structs.GenericResponse]("SystemReconcileSummaries")
)

// nodeMethods returns the methods of this file, for All.
func nodeMethods() []*Info {
	return []*Info{NodeUpdateDrain.info, NodeUpdateEligibility.info, SystemGC.info, SystemReconcileSummaries.info}
}
