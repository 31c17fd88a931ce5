package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerScalingRoutes adds the scaling endpoints: a job's scale status
// and scaling requests, and the scaling policies; and the job version tag
// endpoints (version_tags.go).
func (s *Server) registerScalingRoutes(rt *router) {
	rt.handle("/v1/job/{id}/versions/{name}/tag", s.wrap(s.jobTagApply), http.MethodPut, http.MethodPost)
	rt.handle("/v1/job/{id}/versions/{name}/tag", s.wrap(s.jobTagUnset), http.MethodDelete)
	rt.handle("/v1/job/{id}/scale", s.wrap(s.jobScaleStatus), http.MethodGet)
	rt.handle("/v1/job/{id}/scale", s.wrap(s.jobScale), http.MethodPut, http.MethodPost)
	rt.handle("/v1/scaling/policies", s.wrap(s.scalingPolicyList), http.MethodGet)
	rt.handle("/v1/scaling/policy/{id}", s.wrap(s.scalingPolicyGet), http.MethodGet)
}

// jobScaleBody is the body of POST /v1/job/:id/scale (Nomad's
// ScalingRequest).
type jobScaleBody struct {
	Count          *int64
	Target         map[string]string
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool
	EnforceIndex   bool
	JobModifyIndex uint64
	writeRequest
}

// jobScale is PUT|POST /v1/job/:id/scale: set a group's count, or record
// a scaling event (Count null); the answer a JobRegisterResponse.
func (s *Server) jobScale(w http.ResponseWriter, req *http.Request) (any, error) {
	var body jobScaleBody
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	group := body.Target[structs.ScalingTargetGroup]
	if group == "" {
		return nil, structs.Invalid(`scaling request names no group: set "Target": {"Group": "<group>"}`)
	}
	if id := body.Target[structs.ScalingTargetJob]; id != "" && id != req.PathValue("id") {
		return nil, structs.Invalid("job %q in the target does not match %q in the URL", id, req.PathValue("id"))
	}
	resp, err := rpcapi.JobScale.Call(req.Context(), s.rpc, &structs.JobScaleRequest{
		Namespace: body.namespace(req), JobID: req.PathValue("id"), Group: group, Count: body.Count,
		Message: body.Message, Error: body.Error, Meta: body.Meta, PolicyOverride: body.PolicyOverride,
		EnforceIndex: body.EnforceIndex, JobModifyIndex: body.JobModifyIndex,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.JobRegisterResponse{EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex, JobModifyIndex: resp.JobModifyIndex}, nil
}

// jobScaleStatusAnswer is the JSON of GET /v1/job/:id/scale.
type jobScaleStatusAnswer struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]structs.TaskGroupScaleStatus
}

// jobScaleStatus is GET /v1/job/:id/scale.
func (s *Server) jobScaleStatus(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobScaleStatus.Call(req.Context(), s.rpc, &structs.JobSpecificRequest{JobID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	for g, tg := range resp.TaskGroups {
		tg.Events = nonNil(tg.Events)
		resp.TaskGroups[g] = tg
	}
	return &jobScaleStatusAnswer{JobID: resp.JobID, Namespace: resp.Namespace, JobCreateIndex: resp.JobCreateIndex,
		JobModifyIndex: resp.JobModifyIndex, JobStopped: resp.JobStopped, TaskGroups: resp.TaskGroups}, nil
}

// scalingPolicyList is GET /v1/scaling/policies[?job=][&type=]:
// []ScalingPolicyListStub.
func (s *Server) scalingPolicyList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	q := req.URL.Query()
	resp, err := rpcapi.ScalingPolicyList.Call(req.Context(), s.rpc, &structs.ScalingPolicyListRequest{
		Job: q.Get("job"), Type: q.Get("type"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Policies), nil
}

// scalingPolicyGet is GET /v1/scaling/policy/:id: the ScalingPolicy, with
// its Namespace as Nomad's has it.
func (s *Server) scalingPolicyGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ScalingPolicyGet.Call(req.Context(), s.rpc, &structs.ScalingPolicySpecificRequest{ID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	p := resp.Policy
	return &struct {
		Namespace string
		*structs.ScalingPolicy
	}{p.Target[structs.ScalingTargetNamespace], p}, nil
}
