package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerJobSubmissionRoute registers GET /v1/job/:id/submission.
func (s *Server) registerJobSubmissionRoute(rt *router) {
	rt.handle("/v1/job/{id}/submission", s.wrap(s.jobSubmission), http.MethodGet)
}

// submissionView is a job source as Nomad's JobSubmission.
type submissionView struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string
}

// decodeSubmission reads the Submission of a registration body (Nomad's
// JobSubmission); nil when absent.
func decodeSubmission(raw json.RawMessage) (*structs.JobSubmission, error) {
	if isUnsetJSON(raw) {
		return nil, nil
	}
	var v submissionView
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, structs.Invalid("request body: Submission: %v: send {\"Source\", \"Format\", \"VariableFlags\", \"Variables\"}", err)
	}
	switch v.Format {
	case "", "hcl2", "json", "hcl1":
	default:
		return nil, structs.Invalid("request body: Submission: format %q is not one of hcl2, json", v.Format)
	}
	return &structs.JobSubmission{Source: v.Source, Format: v.Format, VariableFlags: v.VariableFlags, Variables: v.Variables}, nil
}

// jobSubmission is GET /v1/job/:id/submission?version=N: the source the
// version was registered from (Nomad's JobSubmission); 404 "job source
// not found" when none is kept.
func (s *Server) jobSubmission(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	v := req.URL.Query().Get("version")
	if v == "" {
		return nil, structs.Invalid("missing version: add ?version=N (drover job history lists them)")
	}
	version, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, structs.Invalid("version %q is invalid: use a non-negative integer", v)
	}
	resp, err := rpcapi.JobGetSubmission.Call(req.Context(), s.rpc, &structs.JobSubmissionRequest{JobID: req.PathValue("id"), Version: version, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	sub := resp.Submission
	return &submissionView{Source: sub.Source, Format: sub.Format, VariableFlags: sub.VariableFlags, Variables: sub.Variables}, nil
}
