package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerPeriodicRoutes adds the endpoints of periodic and parameterized
// jobs.
func (s *Server) registerPeriodicRoutes(rt *router) {
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	write("/v1/job/{id}/periodic/force", s.jobPeriodicForce)
	write("/v1/job/{id}/dispatch", s.jobDispatch)
}

// jobPeriodicForce is PUT|POST /v1/job/:id/periodic/force: launches a
// periodic job's child now; the answer a PeriodicForceResponse.
func (s *Server) jobPeriodicForce(w http.ResponseWriter, req *http.Request) (any, error) {
	var body writeRequest
	if req.ContentLength > 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	resp, err := rpcapi.JobPeriodicForce.Call(req.Context(), s.rpc, &structs.PeriodicForceRequest{
		Namespace: body.namespace(req), JobID: req.PathValue("id"),
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.PeriodicForceResponse{EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex, Index: resp.Index}, nil
}

// jobDispatch is PUT|POST /v1/job/:id/dispatch: the body is {"Payload":
// base64, "Meta": {...}, "IdPrefixTemplate", "IdempotencyToken"} (the
// token also as ?idempotency_token=); the answer a JobDispatchResponse.
func (s *Server) jobDispatch(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		api.JobDispatchRequest
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
	resp, err := rpcapi.JobDispatch.Call(req.Context(), s.rpc, &structs.JobDispatchRequest{
		Namespace:        body.namespace(req),
		JobID:            id,
		Payload:          body.Payload,
		Meta:             body.Meta,
		IDPrefixTemplate: body.IdPrefixTemplate,
		IdempotencyToken: firstNonEmpty(req.URL.Query().Get("idempotency_token"), body.IdempotencyToken),
		Priority:         body.Priority,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.JobDispatchResponse{
		DispatchedJobID: resp.DispatchedJobID, EvalID: resp.EvalID, EvalCreateIndex: resp.EvalCreateIndex,
		JobCreateIndex: resp.JobCreateIndex, Index: resp.Index,
	}, nil
}
