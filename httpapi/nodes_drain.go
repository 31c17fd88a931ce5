package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerNodeOpRoutes registers the drain, eligibility and servers' GC
// routes.
func (s *Server) registerNodeOpRoutes(rt *router) {
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	write("/v1/node/{id}/drain", s.nodeDrain)
	write("/v1/node/{id}/eligibility", s.nodeEligibility)
	write("/v1/system/gc", s.systemGC)
	write("/v1/system/reconcile/summaries", s.systemReconcileSummaries)
}

// nodeDrain is PUT /v1/node/:id/drain (an ID or a unique prefix):
// api.NodeUpdateDrainRequest -> api.NodeDrainUpdateResponse.
func (s *Server) nodeDrain(w http.ResponseWriter, req *http.Request) (any, error) {
	var in api.NodeUpdateDrainRequest
	if err := decodeBody(req, &in); err != nil {
		return nil, err
	}
	node, err := s.lookupNode(req, req.PathValue("id"), structs.QueryOptions{})
	if err != nil {
		return nil, err
	}
	r := &structs.NodeUpdateDrainRequest{NodeID: node.Node.ID, MarkEligible: in.MarkEligible, Meta: in.Meta}
	if in.DrainSpec != nil {
		r.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{
			Deadline: in.DrainSpec.Deadline, IgnoreSystemJobs: in.DrainSpec.IgnoreSystemJobs,
		}}
	}
	resp, err := rpcapi.NodeUpdateDrain.Call(req.Context(), s.rpc, r)
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return drainResponse(resp), nil
}

// nodeEligibility is PUT /v1/node/:id/eligibility:
// api.NodeUpdateEligibilityRequest -> api.NodeEligibilityUpdateResponse.
func (s *Server) nodeEligibility(w http.ResponseWriter, req *http.Request) (any, error) {
	var in api.NodeUpdateEligibilityRequest
	if err := decodeBody(req, &in); err != nil {
		return nil, err
	}
	node, err := s.lookupNode(req, req.PathValue("id"), structs.QueryOptions{})
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodeUpdateEligibility.Call(req.Context(), s.rpc,
		&structs.NodeUpdateEligibilityRequest{NodeID: node.Node.ID, Eligibility: in.Eligibility})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return drainResponse(resp), nil
}

// drainUpdateView is the body of the drain and eligibility answers, as
// Nomad's.
type drainUpdateView struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	Index           uint64
}

func drainResponse(r *structs.NodeDrainUpdateResponse) drainUpdateView {
	return drainUpdateView{NodeModifyIndex: r.NodeModifyIndex, EvalIDs: nonNil(r.EvalIDs), EvalCreateIndex: r.EvalCreateIndex, Index: r.Index}
}

// systemGC is PUT /v1/system/gc: the servers collect every dead job,
// terminal evaluation and allocation, finished deployment and down node
// now, whatever the thresholds; then, on an agent that runs a client, the
// client removes its terminal allocations' directories (the answer lists
// those, as /v1/client/gc does).
func (s *Server) systemGC(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.SystemGC.Call(req.Context(), s.rpc, &structs.SystemRequest{})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	if s.client == nil {
		return gcResponse{Collected: []string{}}, nil
	}
	return s.clientGC(w, req)
}

// systemReconcileSummaries is PUT /v1/system/reconcile/summaries.
func (s *Server) systemReconcileSummaries(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.SystemReconcileSummaries.Call(req.Context(), s.rpc, &structs.SystemRequest{})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}
