package api

import "net/url"

// PeriodicConfig is a job's periodic block (Nomad's JSON field names):
// the job launches a child job each time one of its cron expressions
// matches.
type PeriodicConfig struct {
	Enabled         *bool    `json:",omitempty"`
	Spec            *string  `json:",omitempty"`
	Specs           []string `json:",omitempty"`
	SpecType        *string  `json:",omitempty"`
	ProhibitOverlap *bool    `json:",omitempty"`
	TimeZone        *string  `json:",omitempty"`
}

// ParameterizedJobConfig is a job's parameterized block: Payload is
// "optional", "required" or "forbidden".
type ParameterizedJobConfig struct {
	Payload      string   `json:",omitempty"`
	MetaRequired []string `json:",omitempty"`
	MetaOptional []string `json:",omitempty"`
}

// DispatchPayloadConfig is a task's dispatch_payload block: the file,
// relative to the task's local/ directory, the payload is written to.
type DispatchPayloadConfig struct {
	File string
}

// JobDispatchRequest is the body of POST /v1/job/:id/dispatch.
type JobDispatchRequest struct {
	JobID            string            `json:",omitempty"`
	Payload          []byte            `json:",omitempty"`
	Meta             map[string]string `json:",omitempty"`
	IdPrefixTemplate string            `json:",omitempty"` //nolint:revive // Nomad's field name
	IdempotencyToken string            `json:",omitempty"` //nolint:revive // Nomad's field name
	// Priority, when above 0, is the dispatched job's priority instead of
	// the parameterized job's.
	Priority int `json:",omitempty"`
}

// JobDispatchResponse answers a dispatch.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// PeriodicForceResponse answers POST /v1/job/:id/periodic/force.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	Index           uint64
}

// PeriodicForce launches a periodic job's child now
// (POST /v1/job/:id/periodic/force) and returns its evaluation's ID.
func (j *Jobs) PeriodicForce(jobID string, w *WriteOptions) (string, *WriteMeta, error) {
	var resp PeriodicForceResponse
	wm, err := j.c.write("POST", "/v1/job/"+url.PathEscape(jobID)+"/periodic/force", nil, &resp, w)
	if err != nil {
		return "", nil, err
	}
	return resp.EvalID, wm, nil
}

// Dispatch instantiates a parameterized job (POST /v1/job/:id/dispatch).
func (j *Jobs) Dispatch(jobID string, req *JobDispatchRequest, w *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	if req == nil {
		req = &JobDispatchRequest{}
	}
	body := *req
	body.JobID = jobID
	var resp JobDispatchResponse
	wm, err := j.c.write("POST", "/v1/job/"+url.PathEscape(jobID)+"/dispatch", &body, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
