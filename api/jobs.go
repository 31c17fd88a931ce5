package api

import (
	"net/url"
	"sort"
	"strconv"
)

// Job types, as in job files.
const (
	JobTypeService = "service"
	JobTypeBatch   = "batch"
	JobTypeSystem  = "system"
)

// Jobs is the job endpoints of the API.
type Jobs struct{ c *Client }

// Jobs returns the job endpoints.
func (c *Client) Jobs() *Jobs { return &Jobs{c: c} }

// JobListStub is the summary of a job returned by GET /v1/jobs.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// JobSummary counts a job's allocations by client status, per group.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary counts one group's allocations by client status.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// Register submits a job (PUT /v1/jobs), creating or updating it.
func (j *Jobs) Register(job *Job, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var resp JobRegisterResponse
	wm, err := j.c.write("PUT", "/v1/jobs", &JobRegisterRequest{Job: job}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// List returns the jobs, sorted by ID.
func (j *Jobs) List(q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	var resp []*JobListStub
	qm, err := j.c.query("/v1/jobs", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(resp, func(a, b int) bool { return resp[a].ID < resp[b].ID })
	return resp, qm, nil
}

// Info returns one job by its exact ID.
func (j *Jobs) Info(jobID string, q *QueryOptions) (*Job, *QueryMeta, error) {
	var resp Job
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations returns the job's allocations; all includes those of earlier
// versions of the job.
func (j *Jobs) Allocations(jobID string, all bool, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	ep := "/v1/job/" + url.PathEscape(jobID) + "/allocations?all=" + strconv.FormatBool(all)
	qm, err := j.c.query(ep, &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sortAllocStubs(resp)
	return resp, qm, nil
}

// Evaluations returns the job's evaluations, newest first.
func (j *Jobs) Evaluations(jobID string, q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	var resp []*Evaluation
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/evaluations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sortEvals(resp)
	return resp, qm, nil
}

// Summary returns the job's allocation counts per group.
func (j *Jobs) Summary(jobID string, q *QueryOptions) (*JobSummary, *QueryMeta, error) {
	var resp JobSummary
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/summary", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Deregister stops the job (DELETE /v1/job/:id); purge also removes it. It
// returns the ID of the evaluation that stops the job's allocations.
func (j *Jobs) Deregister(jobID string, purge bool, w *WriteOptions) (string, *WriteMeta, error) {
	var resp JobDeregisterResponse
	ep := "/v1/job/" + url.PathEscape(jobID) + "?purge=" + strconv.FormatBool(purge)
	wm, err := j.c.write("DELETE", ep, nil, &resp, w)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// ForceEvaluate creates a new evaluation of the job (PUT
// /v1/job/:id/evaluate) and returns its ID.
func (j *Jobs) ForceEvaluate(jobID string, w *WriteOptions) (string, *WriteMeta, error) {
	var resp JobRegisterResponse
	wm, err := j.c.write("PUT", "/v1/job/"+url.PathEscape(jobID)+"/evaluate", nil, &resp, w)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// EvaluateWithOpts creates a new evaluation of the job; forceReschedule
// replaces its failed allocations now, whatever their reschedule delay
// (Nomad's EvalOptions.ForceReschedule).
func (j *Jobs) EvaluateWithOpts(jobID string, forceReschedule bool, w *WriteOptions) (string, *WriteMeta, error) {
	var resp JobRegisterResponse
	body := map[string]any{"JobID": jobID, "EvalOptions": map[string]bool{"ForceReschedule": forceReschedule}}
	wm, err := j.c.write("PUT", "/v1/job/"+url.PathEscape(jobID)+"/evaluate", body, &resp, w)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// ParseHCL asks the agent to parse a job file (PUT /v1/jobs/parse).
func (j *Jobs) ParseHCL(src string, canonicalize bool) (*Job, error) {
	var job Job
	req := &JobsParseRequest{JobHCL: src, Canonicalize: canonicalize}
	if _, err := j.c.write("PUT", "/v1/jobs/parse", req, &job, nil); err != nil {
		return nil, err
	}
	return &job, nil
}
