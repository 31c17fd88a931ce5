package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of operators' tools: a node's forced evaluation and purge,
// the deletion of evaluations.
var (
	// NodeEvaluate creates evaluations of the jobs a node affects.
	// Deduplicated: each call creates evaluations.
	NodeEvaluate = deduplicated[structs.NodeEvaluateRequest, structs.NodeDrainUpdateResponse]("NodeEvaluate")
	// NodePurge removes a node, marks its running allocations lost and
	// evaluates the jobs it affected. Deduplicated: a repeat of a purge
	// that was applied answers as the first did, not "not found".
	NodePurge = deduplicated[structs.NodePurgeRequest, structs.NodeDrainUpdateResponse]("NodePurge")
	// EvalDelete deletes evaluations by ID or filter while the eval
	// broker is paused. Deduplicated: a repeat answers as the first did.
	EvalDelete = deduplicated[structs.EvalDeleteRequest, structs.EvalDeleteResponse]("EvalDelete")
	// Search finds objects by ID prefix or, fuzzily, by name.
	Search = read[structs.SearchRequest, structs.SearchResponse]("Search")
	// JobGetSubmission reads the source a job version was registered
	// from.
	JobGetSubmission = read[structs.JobSubmissionRequest, structs.JobSubmissionResponse]("JobGetSubmission")
)

// opsMethods returns the methods of this file, for All.
func opsMethods() []*Info {
	return []*Info{NodeEvaluate.info, NodePurge.info, EvalDelete.info, Search.info, JobGetSubmission.info}
}
