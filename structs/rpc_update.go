package structs

// Request and response types of job versions, plans, deployments and the
// scheduler configuration.

// DesiredUpdates counts what the scheduler would do, or did, to one group's
// allocations (Nomad's plan annotations).
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
}

// PlanAnnotations explain a plan: per group counts, and the allocations
// that placements would preempt.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocListStub
}

// JobPlanRequest dry-runs the scheduler for a job without committing
// anything; with Diff the response holds the difference from the current
// version.
type JobPlanRequest struct {
	Job  *Job
	Diff bool
}

// JobPlanResponse is what a job plan would do.
type JobPlanResponse struct {
	// JobModifyIndex is the current job's JobModifyIndex (0 when it does
	// not exist): pass it to `job run -check-index`.
	JobModifyIndex uint64
	Annotations    *PlanAnnotations
	FailedTGAllocs map[string]*AllocMetric
	// CreatedEvals are the evaluations that running the job would create
	// (not stored): the blocked one when placements fail.
	CreatedEvals []*Evaluation
	Diff         *JobDiff
	Warnings     string
	// PlacementMetrics is drover's addition: per group, how the first
	// allocation the plan places chose its node (the scores of the chosen
	// node and the runners-up), for `job plan -verbose`.
	PlacementMetrics map[string]*AllocMetric
	WriteMeta
}

// JobVersionsRequest lists the kept versions of a job, newest first.
type JobVersionsRequest struct {
	JobID string
	Diffs bool
	QueryOptions
}

// JobVersionsResponse holds the versions, newest first, and with Diffs
// the difference of each from the next older one (Diffs[i] goes from
// Versions[i+1] to Versions[i]).
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// JobRevertRequest re-registers a kept version of a job as its newest
// version. With EnforcePriorVersion, the job's current version must equal
// it.
type JobRevertRequest struct {
	Namespace           string
	JobID               string
	JobVersion          uint64
	EnforcePriorVersion *uint64
	WriteRequest
}

// DeploymentListRequest lists deployments (all, or one job's with JobID).
type DeploymentListRequest struct {
	JobID string
	QueryOptions
}

// DeploymentListResponse returns deployments, newest first.
type DeploymentListResponse struct {
	Deployments []*Deployment
	QueryMeta
}

// DeploymentSpecificRequest reads one deployment, by ID or unique prefix,
// or with JobID the latest deployment of a job.
type DeploymentSpecificRequest struct {
	DeploymentID string
	JobID        string
	QueryOptions
}

// SingleDeploymentResponse returns one deployment; nil when none.
type SingleDeploymentResponse struct {
	Deployment *Deployment
	QueryMeta
}

// SchedulerConfigRequest reads the scheduler configuration.
type SchedulerConfigRequest struct {
	QueryOptions
}

// SchedulerConfigResponse returns the scheduler configuration.
type SchedulerConfigResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}

// SchedulerSetConfigRequest sets the scheduler configuration; with CAS it
// is set only if the current ModifyIndex equals Config.ModifyIndex.
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
	WriteRequest
}

// SchedulerSetConfigResponse says whether the configuration was written.
type SchedulerSetConfigResponse struct {
	Updated bool
	WriteMeta
}

// EvalTriggerDeploymentWatcher marks the evaluations created when a
// client reports the health of a deployment's allocation.
const EvalTriggerDeploymentWatcher = "deployment-watcher"

// JobTrackedVersions is how many versions of a job the server keeps.
const JobTrackedVersions = 6

// PreemptionPriorityDelta is how much lower than the preempting job's
// priority a job's must be for its allocations to be preempted (Nomad's).
const PreemptionPriorityDelta = 10

// DeploymentFailRequest fails an active deployment by hand.
type DeploymentFailRequest struct {
	DeploymentID string
	Namespace    string
}

// DeploymentPauseRequest pauses (Pause true) or resumes an active
// deployment.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
	Namespace    string
}

// DeploymentPromoteRequest promotes the canaries of an active
// deployment: of every group (All) or of the named Groups.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	Namespace    string
}

// DeploymentUpdateResponse answers a change of a deployment's status:
// the evaluation created (if any), the raft index of the change, and the
// job version auto_revert went back to (nil when none).
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	RevertedJobVersion    *uint64
	Index                 uint64
}

// JobValidateRequest asks the server to check a job as a registration
// would, without storing anything.
type JobValidateRequest struct {
	Job *Job
}

// JobValidateResponse lists a job's problems: empty when it would be
// accepted.
type JobValidateResponse struct {
	Problems []string
}
