package api

import (
	"net/url"
	"strconv"
	"time"
)

// JobPlanRequest is the body of `PUT /v1/job/:id/plan`.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool `json:",omitempty"`

	// Sent by Nomad's clients (their WriteRequest).
	Region    string `json:",omitempty"`
	Namespace string `json:",omitempty"`
	SecretID  string `json:",omitempty"`
}

// JobPlanResponse is what the scheduler would do with a job, computed
// without committing anything.
type JobPlanResponse struct {
	// JobModifyIndex is the current job's; pass it to `job run -check-index`.
	JobModifyIndex uint64
	Diff           *JobDiff
	Annotations    *PlanAnnotations
	FailedTGAllocs map[string]*AllocationMetric
	Warnings       string
	// PlacementMetrics is drover's: per group, how its first placement
	// chose its node, with the scores of the runners-up.
	PlacementMetrics map[string]*AllocationMetric `json:",omitempty"`
}

// JobDiff is the difference between two versions of a job.
type JobDiff struct {
	Type       string // Added, Deleted, Edited or None
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is the difference of one group; Updates counts by kind
// ("create", "in-place update", "create/destroy update", ...) what the
// scheduler would do to its allocations.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is the difference of one task.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is the difference of one field.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is the difference of a nested object.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// PlanAnnotations explain a plan.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocationListStub
}

// DesiredUpdates counts what a plan does to one group's allocations.
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

// JobVersionsResponse is the body of `GET /v1/job/:id/versions`.
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
}

// JobRevertRequest is the body of `PUT /v1/job/:id/revert`.
type JobRevertRequest struct {
	JobID               string
	JobVersion          uint64
	EnforcePriorVersion *uint64 `json:",omitempty"`

	// Sent by Nomad's clients (their WriteRequest).
	Region    string `json:",omitempty"`
	Namespace string `json:",omitempty"`
	SecretID  string `json:",omitempty"`
}

// Deployment tracks a rolling update of a job to a new version.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	CreateIndex        uint64
	ModifyIndex        uint64
}

// Statuses of a deployment, as Nomad's API names them.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusCancelled  = "cancelled"
)

// DeploymentState is one group's progress in a deployment.
type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	PlacedCanaries    []string
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// RegisterOpts submits a job; with enforceIndex the registration succeeds
// only if the job's JobModifyIndex is modifyIndex (0: it must not exist),
// which is what `job run -check-index` does.
func (j *Jobs) RegisterOpts(job *Job, enforceIndex bool, modifyIndex uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var resp JobRegisterResponse
	req := &JobRegisterRequest{Job: job, EnforceIndex: enforceIndex, JobModifyIndex: modifyIndex}
	wm, err := j.c.write("PUT", "/v1/jobs", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Plan dry-runs the scheduler for job (`PUT /v1/job/:id/plan`); with diff
// the answer holds the difference from the current version.
func (j *Jobs) Plan(job *Job, diff bool, w *WriteOptions) (*JobPlanResponse, *WriteMeta, error) {
	var resp JobPlanResponse
	id := ""
	if job != nil && job.ID != nil {
		id = *job.ID
	}
	wm, err := j.c.write("PUT", "/v1/job/"+url.PathEscape(id)+"/plan", &JobPlanRequest{Job: job, Diff: diff}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Versions returns the kept versions of a job, newest first, and with
// diffs the difference of each from the one before.
func (j *Jobs) Versions(jobID string, diffs bool, q *QueryOptions) ([]*Job, []*JobDiff, *QueryMeta, error) {
	var resp JobVersionsResponse
	ep := "/v1/job/" + url.PathEscape(jobID) + "/versions?diffs=" + strconv.FormatBool(diffs)
	qm, err := j.c.query(ep, &resp, q)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Versions, resp.Diffs, qm, nil
}

// Revert registers a kept version of the job again as its newest version;
// with enforcePriorVersion the job's current version must be that one.
func (j *Jobs) Revert(jobID string, version uint64, enforcePriorVersion *uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var resp JobRegisterResponse
	req := &JobRevertRequest{JobID: jobID, JobVersion: version, EnforcePriorVersion: enforcePriorVersion}
	wm, err := j.c.write("PUT", "/v1/job/"+url.PathEscape(jobID)+"/revert", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// LatestDeployment returns the job's most recent deployment, nil if none.
func (j *Jobs) LatestDeployment(jobID string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	var resp *Deployment
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/deployment", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Deployments returns the job's deployments, newest first.
func (j *Jobs) Deployments(jobID string, q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	var resp []*Deployment
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/deployments", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Deployments is the deployments endpoint group.
type Deployments struct{ c *Client }

// Deployments returns the deployments endpoints.
func (c *Client) Deployments() *Deployments { return &Deployments{c: c} }

// List returns every deployment, newest first.
func (d *Deployments) List(q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	var resp []*Deployment
	qm, err := d.c.query("/v1/deployments", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// Info returns one deployment by ID (or unique prefix).
func (d *Deployments) Info(id string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	var resp Deployment
	qm, err := d.c.query("/v1/deployment/"+url.PathEscape(id), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// DeploymentUpdateResponse answers a change of a deployment's status: the
// evaluation it created (if any) and the job version auto_revert went back
// to (nil when none).
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	RevertedJobVersion    *uint64
	Index                 uint64
}

// deploymentPauseRequest is the body of `PUT /v1/deployment/pause/:id`.
type deploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
}

// Fail marks an active deployment failed (`PUT /v1/deployment/fail/:id`);
// with auto_revert set the job goes back to its latest stable version.
func (d *Deployments) Fail(id string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	var resp DeploymentUpdateResponse
	wm, err := d.c.write("PUT", "/v1/deployment/fail/"+url.PathEscape(id), &struct{ DeploymentID string }{DeploymentID: id}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// deploymentPromoteRequest is the body of a promotion.
type deploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string `json:",omitempty"`
}

// PromoteAll promotes the canaries of every task group of an active
// deployment (`PUT /v1/deployment/promote/:id`).
func (d *Deployments) PromoteAll(id string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.promote(&deploymentPromoteRequest{DeploymentID: id, All: true}, w)
}

// PromoteGroups promotes the canaries of the named task groups of an
// active deployment.
func (d *Deployments) PromoteGroups(id string, groups []string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.promote(&deploymentPromoteRequest{DeploymentID: id, Groups: groups}, w)
}

func (d *Deployments) promote(body *deploymentPromoteRequest, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	var resp DeploymentUpdateResponse
	wm, err := d.c.write("PUT", "/v1/deployment/promote/"+url.PathEscape(body.DeploymentID), body, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Pause pauses (pause true) or resumes an active deployment
// (`PUT /v1/deployment/pause/:id`).
func (d *Deployments) Pause(id string, pause bool, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	var resp DeploymentUpdateResponse
	wm, err := d.c.write("PUT", "/v1/deployment/pause/"+url.PathEscape(id), &deploymentPauseRequest{DeploymentID: id, Pause: pause}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
