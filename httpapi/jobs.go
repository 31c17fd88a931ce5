package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// jobList is GET /v1/jobs: []JobListStub.
func (s *Server) jobList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobList.Call(req.Context(), s.rpc, &structs.JobListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Jobs), nil
}

// jobRegister is PUT|POST /v1/jobs and PUT|POST /v1/job/:id: the body is
// {"Job": {...}}; the answer a JobRegisterResponse. Nothing is written
// unless the job converts and validates.
func (s *Server) jobRegister(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.JobRegisterRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, structs.Invalid("request body has no Job: send {\"Job\": {...}}")
	}
	if body.Job.ID == nil || *body.Job.ID == "" {
		return nil, structs.Invalid("job ID is missing")
	}
	if id := req.PathValue("id"); id != "" && id != *body.Job.ID {
		return nil, structs.Invalid("job ID %q in the body does not match %q in the URL", *body.Job.ID, id)
	}
	job, warnings, err := ConvertJob(body.Job)
	if err != nil {
		return nil, err
	}
	if job.Namespace == "" {
		job.Namespace = firstNonEmpty(req.URL.Query().Get("namespace"), body.Namespace, structs.DefaultNamespace)
	}
	if job.Namespace == "*" {
		return nil, structs.Invalid("namespace \"*\" means all namespaces and is valid only for reads: register the job in one namespace")
	}
	if job.Region == "" {
		job.Region = firstNonEmpty(req.URL.Query().Get("region"), body.Region)
	}
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		return nil, err
	}
	sub, err := decodeSubmission(body.Submission) // job_submission.go
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobRegister.Call(req.Context(), s.rpc, &structs.JobRegisterRequest{
		Job:               job,
		Submission:        sub,
		EnforceIndex:      body.EnforceIndex,
		JobModifyIndex:    body.JobModifyIndex,
		PreserveCounts:    body.PreserveCounts,
		PreserveResources: body.PreserveResources,
		EvalPriority:      body.EvalPriority,
	})
	if err != nil {
		return nil, err
	}
	if resp.Warnings != "" {
		warnings = append(warnings, resp.Warnings)
	}
	setIndex(w, resp.Index)
	return &api.JobRegisterResponse{
		EvalID:          resp.EvalID,
		EvalCreateIndex: resp.EvalCreateIndex,
		JobModifyIndex:  resp.JobModifyIndex,
		Warnings:        formatWarnings(warnings),
	}, nil
}

// formatWarnings renders warnings as Nomad's clients print them.
func formatWarnings(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return "1 warning:\n\n* " + ws[0]
	}
	return fmt.Sprintf("%d warnings:\n\n* %s", len(ws), strings.Join(ws, "\n* "))
}

// jobGet is GET /v1/job/:id. The ID may be a unique prefix.
func (s *Server) jobGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobGet.Call(req.Context(), s.rpc, &structs.JobSpecificRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp.Job, nil
}

// jobDeregister is DELETE /v1/job/:id[?purge=true][&eval_priority=N].
func (s *Server) jobDeregister(w http.ResponseWriter, req *http.Request) (any, error) {
	purge, err := boolParam(req, "purge")
	if err != nil {
		return nil, err
	}
	priority, err := intParam(req, "eval_priority")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobDeregister.Call(req.Context(), s.rpc, &structs.JobDeregisterRequest{
		Namespace:    namespaceParam(req),
		JobID:        req.PathValue("id"),
		Purge:        purge,
		EvalPriority: priority,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.JobDeregisterResponse{
		EvalID:          resp.EvalID,
		EvalCreateIndex: resp.EvalCreateIndex,
		JobModifyIndex:  resp.JobModifyIndex,
	}, nil
}

// jobEvaluate is PUT|POST /v1/job/:id/evaluate: a new evaluation of the
// job; the body (optional) is Nomad's JobEvaluateRequest, {"JobID",
// "EvalOptions": {"ForceReschedule"}}; the answer a JobRegisterResponse.
func (s *Server) jobEvaluate(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		JobID       string
		EvalOptions struct{ ForceReschedule bool }
		writeRequest
	}
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	id := req.PathValue("id")
	if body.JobID != "" && body.JobID != id {
		return nil, structs.Invalid("job ID %q in the body does not match %q in the URL", body.JobID, id)
	}
	resp, err := rpcapi.JobEvaluate.Call(req.Context(), s.rpc, &structs.JobEvaluateRequest{
		Namespace: body.namespace(req), JobID: id, ForceReschedule: body.EvalOptions.ForceReschedule,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.JobRegisterResponse{EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex, JobModifyIndex: resp.JobModifyIndex}, nil
}

// jobAllocations is GET /v1/job/:id/allocations[?all=true]: []AllocListStub.
func (s *Server) jobAllocations(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	all, err := boolParam(req, "all")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobAllocations.Call(req.Context(), s.rpc, &structs.JobSpecificRequest{JobID: req.PathValue("id"), All: all, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Allocations), nil
}

// jobEvaluations is GET /v1/job/:id/evaluations: []Evaluation.
func (s *Server) jobEvaluations(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobEvaluations.Call(req.Context(), s.rpc, &structs.JobSpecificRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Evaluations), nil
}

// jobSummary is GET /v1/job/:id/summary: the job's JobSummary.
func (s *Server) jobSummary(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobSummary.Call(req.Context(), s.rpc, &structs.JobSpecificRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp.JobSummary, nil
}

// nonNil returns s, or an empty slice so that JSON has [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
