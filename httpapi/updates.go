package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerUpdateRoutes adds the endpoints of job versions, plans,
// deployments and the scheduler configuration (the job versions and
// deployment routes of a job are registered with the other job routes).
func (s *Server) registerUpdateRoutes(rt *router) {
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	write("/v1/job/{id}/plan", s.jobPlan)
	write("/v1/job/{id}/revert", s.jobRevert)
	get("/v1/deployments", s.deploymentList)
	get("/v1/deployment/{id}", s.deploymentGet)
	get("/v1/deployment/allocations/{id}", s.deploymentAllocations)
	write("/v1/deployment/fail/{id}", s.deploymentFail)
	write("/v1/deployment/pause/{id}", s.deploymentPause)
	write("/v1/deployment/promote/{id}", s.deploymentPromote)
	get("/v1/operator/scheduler/configuration", s.schedulerGetConfig)
	write("/v1/operator/scheduler/configuration", s.schedulerSetConfig)
}

// jobVersions is GET /v1/job/:id/versions[?diffs=true]:
// {"Versions": [...newest first], "Diffs": [...]}.
func (s *Server) jobVersions(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	diffs, err := boolParam(req, "diffs")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobVersions.Call(req.Context(), s.rpc, &structs.JobVersionsRequest{JobID: req.PathValue("id"), Diffs: diffs, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return &jobVersionsResponse{Versions: resp.Versions, Diffs: resp.Diffs, Index: resp.Index}, nil
}

// jobVersionsResponse is the body of GET /v1/job/:id/versions.
type jobVersionsResponse struct {
	Versions []*structs.Job
	Diffs    []*structs.JobDiff
	Index    uint64
}

// jobDeployment is GET /v1/job/:id/deployment: the job's latest
// deployment, null when it never had one; an unknown job is a 404.
func (s *Server) jobDeployment(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentGet.Call(req.Context(), s.rpc, &structs.DeploymentSpecificRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp.Deployment, nil
}

// jobDeployments is GET /v1/job/:id/deployments: newest first; an unknown
// job is a 404.
func (s *Server) jobDeployments(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentList.Call(req.Context(), s.rpc, &structs.DeploymentListRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Deployments), nil
}

// deploymentList is GET /v1/deployments[?prefix=]: newest first.
func (s *Server) deploymentList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentList.Call(req.Context(), s.rpc, &structs.DeploymentListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Deployments), nil
}

// deploymentGet is GET /v1/deployment/:id (ID or unique prefix).
func (s *Server) deploymentGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentGet.Call(req.Context(), s.rpc, &structs.DeploymentSpecificRequest{DeploymentID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp.Deployment, nil
}

// deploymentAllocations is GET /v1/deployment/allocations/:id:
// []AllocListStub of the allocations the deployment placed.
func (s *Server) deploymentAllocations(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentAllocations.Call(req.Context(), s.rpc, &structs.DeploymentSpecificRequest{DeploymentID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Allocations), nil
}

// deploymentFail is PUT|POST /v1/deployment/fail/:id: the body (optional)
// is {"DeploymentID"}; the answer a DeploymentUpdateResponse.
func (s *Server) deploymentFail(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		DeploymentID string
		writeRequest
	}
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	id, err := deploymentIDOf(req, body.DeploymentID)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentFail.Call(req.Context(), s.rpc, &structs.DeploymentFailRequest{DeploymentID: id, Namespace: body.namespace(req)})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return resp, nil
}

// deploymentPause is PUT|POST /v1/deployment/pause/:id: the body is
// {"DeploymentID", "Pause": true|false}; the answer a
// DeploymentUpdateResponse.
func (s *Server) deploymentPause(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		DeploymentID string
		Pause        bool
		writeRequest
	}
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id, err := deploymentIDOf(req, body.DeploymentID)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentPause.Call(req.Context(), s.rpc, &structs.DeploymentPauseRequest{DeploymentID: id, Pause: body.Pause, Namespace: body.namespace(req)})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return resp, nil
}

// deploymentPromote is PUT|POST /v1/deployment/promote/:id: the body is
// {"DeploymentID", "All": true} or {"DeploymentID", "Groups": [...]};
// the answer a DeploymentUpdateResponse.
func (s *Server) deploymentPromote(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		DeploymentID string
		All          bool
		Groups       []string
		writeRequest
	}
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id, err := deploymentIDOf(req, body.DeploymentID)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.DeploymentPromote.Call(req.Context(), s.rpc, &structs.DeploymentPromoteRequest{
		DeploymentID: id, All: body.All, Groups: body.Groups, Namespace: body.namespace(req)})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return resp, nil
}

// deploymentIDOf returns the deployment ID of the URL, which the body's
// (when given) must match.
func deploymentIDOf(req *http.Request, inBody string) (string, error) {
	id := req.PathValue("id")
	if inBody != "" && inBody != id {
		return "", structs.Invalid("deployment ID %q in the body does not match %q in the URL", inBody, id)
	}
	return id, nil
}

// jobPlan is PUT|POST /v1/job/:id/plan: the body is {"Job": {...},
// "Diff": true}; the answer a JobPlanResponse. Nothing is committed.
func (s *Server) jobPlan(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.JobPlanRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	job, warnings, err := s.submittedJob(req, body.Job, body.Namespace, body.Region)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobPlan.Call(req.Context(), s.rpc, &structs.JobPlanRequest{Job: job, Diff: body.Diff})
	if err != nil {
		return nil, err
	}
	if resp.Warnings != "" {
		warnings = append(warnings, resp.Warnings)
	}
	setIndex(w, resp.Index)
	return &jobPlanResponse{
		JobModifyIndex:     resp.JobModifyIndex,
		Annotations:        resp.Annotations,
		FailedTGAllocs:     resp.FailedTGAllocs,
		Diff:               resp.Diff,
		Warnings:           formatWarnings(warnings),
		CreatedEvals:       append([]*structs.Evaluation{}, resp.CreatedEvals...),
		NextPeriodicLaunch: time.Time{},
		Index:              resp.Index,
		PlacementMetrics:   resp.PlacementMetrics,
	}, nil
}

// jobPlanResponse is Nomad's JobPlanResponse.
type jobPlanResponse struct {
	JobModifyIndex     uint64
	CreatedEvals       []*structs.Evaluation
	Diff               *structs.JobDiff
	Annotations        *structs.PlanAnnotations
	FailedTGAllocs     map[string]*structs.AllocMetric
	NextPeriodicLaunch time.Time
	Warnings           string
	Index              uint64
	// PlacementMetrics (drover's) are the scores of each group's first
	// placement; Nomad's clients ignore the field.
	PlacementMetrics map[string]*structs.AllocMetric `json:",omitempty"`
}

// submittedJob converts and validates a submitted job as a registration
// does; namespace and region fill in what the job leaves unset.
func (s *Server) submittedJob(req *http.Request, in *api.Job, namespace, region string) (*structs.Job, []string, error) {
	if in == nil {
		return nil, nil, structs.Invalid("request body has no Job: send {\"Job\": {...}}")
	}
	if in.ID == nil || *in.ID == "" {
		return nil, nil, structs.Invalid("job ID is missing")
	}
	if id := req.PathValue("id"); id != "" && id != *in.ID {
		return nil, nil, structs.Invalid("job ID %q in the body does not match %q in the URL", *in.ID, id)
	}
	job, warnings, err := ConvertJob(in)
	if err != nil {
		return nil, nil, err
	}
	if job.Namespace == "" {
		job.Namespace = firstNonEmpty(req.URL.Query().Get("namespace"), namespace, structs.DefaultNamespace)
	}
	if job.Namespace == "*" {
		return nil, nil, structs.Invalid("namespace \"*\" means all namespaces: give the job one namespace")
	}
	if job.Region == "" {
		job.Region = firstNonEmpty(req.URL.Query().Get("region"), region)
	}
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		return nil, nil, err
	}
	return job, warnings, nil
}

// jobRevert is PUT|POST /v1/job/:id/revert: the body is {"JobID",
// "JobVersion", "EnforcePriorVersion"}; the answer a JobRegisterResponse.
func (s *Server) jobRevert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.JobRevertRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id := req.PathValue("id")
	if body.JobID != "" && body.JobID != id {
		return nil, structs.Invalid("job ID %q in the body does not match %q in the URL", body.JobID, id)
	}
	ns := namespaceParam(req)
	if req.URL.Query().Get("namespace") == "" && body.Namespace != "" {
		ns = body.Namespace
	}
	resp, err := rpcapi.JobRevert.Call(req.Context(), s.rpc, &structs.JobRevertRequest{
		Namespace: ns, JobID: id, JobVersion: body.JobVersion, EnforcePriorVersion: body.EnforcePriorVersion,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.JobRegisterResponse{
		EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex, JobModifyIndex: resp.JobModifyIndex, Warnings: resp.Warnings,
	}, nil
}

// schedulerGetConfig is GET /v1/operator/scheduler/configuration:
// {"SchedulerConfig": {...}, "Index": N, ...}.
func (s *Server) schedulerGetConfig(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.SchedulerGetConfig.Call(req.Context(), s.rpc, &structs.SchedulerConfigRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return &schedulerConfigResponse{
		SchedulerConfig: resp.SchedulerConfig,
		Index:           max(resp.Index, 1),
		KnownLeader:     resp.KnownLeader,
		LastContact:     resp.LastContact,
	}, nil
}

// schedulerConfigResponse is Nomad's SchedulerConfigurationResponse.
type schedulerConfigResponse struct {
	SchedulerConfig *structs.SchedulerConfiguration
	Index           uint64
	KnownLeader     bool
	LastContact     time.Duration
}

// schedulerSetConfig is PUT|POST /v1/operator/scheduler/configuration
// [?cas=N]: the body is a SchedulerConfiguration; the answer
// {"Updated": bool, "Index": N}. With cas, the write happens only if N is
// the current configuration's ModifyIndex.
func (s *Server) schedulerSetConfig(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.SchedulerConfiguration
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	r := &structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{
		SchedulerAlgorithm: body.SchedulerAlgorithm,
		PreemptionConfig: structs.PreemptionConfig{
			SystemSchedulerEnabled:   body.PreemptionConfig.SystemSchedulerEnabled,
			SysBatchSchedulerEnabled: body.PreemptionConfig.SysBatchSchedulerEnabled,
			BatchSchedulerEnabled:    body.PreemptionConfig.BatchSchedulerEnabled,
			ServiceSchedulerEnabled:  body.PreemptionConfig.ServiceSchedulerEnabled,
		},
		MemoryOversubscriptionEnabled: body.MemoryOversubscriptionEnabled,
		RejectJobRegistration:         body.RejectJobRegistration,
		PauseEvalBroker:               body.PauseEvalBroker,
		NodeLimitForFeasibilityChecks: body.NodeLimitForFeasibilityChecks,
		ModifyIndex:                   body.ModifyIndex,
	}}
	if v := req.URL.Query().Get("cas"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, structs.Invalid("cas %q is not an index: give the configuration's ModifyIndex", v)
		}
		r.CAS, r.Config.ModifyIndex = true, idx
	}
	resp, err := rpcapi.SchedulerSetConfig.Call(req.Context(), s.rpc, r)
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.SchedulerSetConfigurationResponse{Updated: resp.Updated, Index: resp.Index}, nil
}
