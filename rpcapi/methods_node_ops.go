package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of a node's forced evaluation and purge.
var (
	// NodeEvaluate creates evaluations of the jobs a node affects.
	// Deduplicated: each call creates evaluations.
	NodeEvaluate = deduplicated[structs.NodeEvaluateRequest, structs.NodeDrainUpdateResponse]("NodeEvaluate")
	// NodePurge removes a node, marks its running allocations lost and
	// evaluates the jobs it affected. Deduplicated: a repeat of a purge
	// that was applied answers as the first did, not "not found".
	NodePurge = deduplicated[structs.NodePurgeRequest, structs.NodeDrainUpdateResponse]("NodePurge")
)

// nodeOpMethods returns the methods of this file, for All.
func nodeOpMethods() []*Info {
	return []*Info{NodeEvaluate.info, NodePurge.info}
}
