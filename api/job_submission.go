package api

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// JobSubmission is the source a job version was registered from, as
// Nomad's: the job file's text, its format ("hcl2" or "json"), the -var
// flags and the variable files' content.
type JobSubmission struct {
	Source        string
	Format        string
	VariableFlags map[string]string `json:",omitempty"`
	Variables     string
}

// RegisterWithSource is RegisterOpts that sends the job file too, kept
// by the servers with the version it makes (nil: none).
func (j *Jobs) RegisterWithSource(job *Job, enforceIndex bool, modifyIndex uint64, sub *JobSubmission, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	req := &JobRegisterRequest{Job: job, EnforceIndex: enforceIndex, JobModifyIndex: modifyIndex}
	if sub != nil {
		raw, err := json.Marshal(sub)
		if err != nil {
			return nil, nil, fmt.Errorf("encode the job's source: %w", err)
		}
		req.Submission = raw
	}
	var resp JobRegisterResponse
	wm, err := j.c.write("PUT", "/v1/jobs", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// Submission returns the source version of job jobID was registered from
// (GET /v1/job/:id/submission?version=N).
func (j *Jobs) Submission(jobID string, version uint64, q *QueryOptions) (*JobSubmission, *QueryMeta, error) {
	var resp JobSubmission
	qm, err := j.c.query(fmt.Sprintf("/v1/job/%s/submission?version=%d", url.PathEscape(jobID), version), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}
