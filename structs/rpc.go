package structs

import "time"

// QueryOptions are the common options of a read: namespace, prefix and the
// blocking-query parameters (return once the index exceeds MinQueryIndex, or
// after MaxQueryTime).
type QueryOptions struct {
	Region        string
	Namespace     string // "*" means all namespaces
	Prefix        string // ID prefix filter for list and get endpoints
	MinQueryIndex uint64
	MaxQueryTime  time.Duration
	AllowStale    bool
	// PerPage, when above 0, pages a list: at most PerPage items, from
	// the one NextToken names (the QueryMeta.NextToken of the page
	// before; empty: from the first).
	PerPage   int32
	NextToken string
}

// QueryMeta is returned with every read: the index to use as the next
// MinQueryIndex.
type QueryMeta struct {
	Index       uint64
	KnownLeader bool
	LastContact time.Duration
	// NextToken names the first item of a paged list's next page; empty
	// on its last page.
	NextToken string
}

// WriteMeta is returned with every write.
type WriteMeta struct {
	Index uint64
}

// Blocking-query bounds, as in Nomad.
const (
	DefaultBlockingWait = 5 * time.Minute
	MaxBlockingWait     = 10 * time.Minute
)

// JobRegisterRequest registers (creates or updates) a job.
type JobRegisterRequest struct {
	Job            *Job
	EnforceIndex   bool
	JobModifyIndex uint64
	// PreserveCounts keeps the count of each group the job had already.
	PreserveCounts bool
	// PreserveResources keeps the resources of each task the job had
	// already.
	PreserveResources bool
	// EvalPriority, when above 0, is the evaluation's priority instead of
	// the job's.
	EvalPriority int
	// Submission is the job file the job was parsed from, kept with the
	// version it makes (up to MaxJobSourceBytes).
	Submission *JobSubmission
	WriteRequest
}

// JobRegisterResponse is returned by a job registration.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	WriteMeta
}

// JobEvaluateRequest asks for a new evaluation of an existing job.
type JobEvaluateRequest struct {
	Namespace string
	JobID     string
	// ForceReschedule is Nomad's: replace failed allocations now, whatever
	// their reschedule policy's delay.
	ForceReschedule bool
	WriteRequest
}

// JobDeregisterRequest stops a job, and with Purge removes it.
type JobDeregisterRequest struct {
	Namespace string
	JobID     string
	Purge     bool
	// EvalPriority, when above 0, is the evaluation's priority instead of
	// the job's.
	EvalPriority int
	// Submission is the job file the job was parsed from, kept with the
	// version it makes (up to MaxJobSourceBytes).
	Submission *JobSubmission
	WriteRequest
}

// JobDeregisterResponse is returned by a job deregistration.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	WriteMeta
}

// JobSpecificRequest reads one job (or its allocations or evaluations).
type JobSpecificRequest struct {
	JobID string
	// All includes allocations of earlier job versions and terminal ones.
	All bool
	QueryOptions
}

// SingleJobResponse returns one job; Job is nil when it does not exist.
type SingleJobResponse struct {
	Job *Job
	QueryMeta
}

// JobListRequest lists jobs.
type JobListRequest struct {
	QueryOptions
}

// JobListResponse returns job summaries.
type JobListResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// JobAllocationsResponse returns a job's allocations.
type JobAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// JobEvaluationsResponse returns a job's evaluations.
type JobEvaluationsResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// AllocListRequest lists allocations.
type AllocListRequest struct {
	// Resources includes each allocation's AllocatedResources in its stub
	// (?resources=true).
	Resources bool
	QueryOptions
}

// AllocListResponse returns allocation summaries.
type AllocListResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// AllocSpecificRequest reads one allocation, by ID or unique ID prefix.
type AllocSpecificRequest struct {
	AllocID string
	QueryOptions
}

// SingleAllocResponse returns one allocation; Alloc is nil when it does not exist.
type SingleAllocResponse struct {
	Alloc *Allocation
	QueryMeta
}

// EvalListRequest lists evaluations.
type EvalListRequest struct {
	QueryOptions
}

// EvalListResponse returns evaluations.
type EvalListResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// EvalSpecificRequest reads one evaluation, by ID or unique ID prefix.
type EvalSpecificRequest struct {
	EvalID string
	// IncludeRelated fills SingleEvalResponse.Related (?related=true).
	IncludeRelated bool
	QueryOptions
}

// SingleEvalResponse returns one evaluation; Eval is nil when it does not exist.
type SingleEvalResponse struct {
	Eval *Evaluation
	// Related are the evaluations linked to Eval, directly or not, by
	// their NextEval, PreviousEval and BlockedEval, when asked for.
	Related []*EvaluationStub
	QueryMeta
}

// NodeListRequest lists nodes.
type NodeListRequest struct {
	// Resources includes each node's NodeResources and ReservedResources
	// in its stub (?resources=true).
	Resources bool
	QueryOptions
}

// NodeListResponse returns node summaries.
type NodeListResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// NodeSpecificRequest names one node; for client RPCs SecretID authenticates it.
type NodeSpecificRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// SingleNodeResponse returns one node; Node is nil when it does not exist.
type SingleNodeResponse struct {
	Node *Node
	QueryMeta
}

// NodeRegisterRequest registers or re-registers a client node.
type NodeRegisterRequest struct {
	Node *Node
}

// NodeUpdateStatusRequest is a client's heartbeat: it sets the node's status.
type NodeUpdateStatusRequest struct {
	NodeID   string
	SecretID string
	Status   string
}

// NodeUpdateResponse is returned by registration and heartbeats.
type NodeUpdateResponse struct {
	// HeartbeatTTL is how long the server waits for the next heartbeat
	// before marking the node down.
	HeartbeatTTL time.Duration
	// EvalIDs are the evaluations created by the node's change.
	EvalIDs []string
	WriteMeta
}

// NodeClientAllocsResponse tells a client which allocations it should run:
// alloc ID -> AllocModifyIndex. The client fetches those whose index changed.
type NodeClientAllocsResponse struct {
	Allocs map[string]uint64
	QueryMeta
}

// AllocsGetRequest fetches full allocations by ID.
type AllocsGetRequest struct {
	AllocIDs []string
	QueryOptions
}

// AllocsGetResponse returns full allocations.
type AllocsGetResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// AllocUpdateRequest carries client-side changes: each Allocation holds only
// ID, NodeID, ClientStatus, ClientDescription, TaskStates and DeploymentStatus.
type AllocUpdateRequest struct {
	NodeID   string
	SecretID string
	Alloc    []*Allocation
}

// GenericResponse is returned by writes that return nothing else.
type GenericResponse struct {
	WriteMeta
}
