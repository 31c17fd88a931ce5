package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerNodeOpsRoutes registers a node's forced evaluation and purge.
func (s *Server) registerNodeOpsRoutes(rt *router) {
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	write("/v1/node/{id}/evaluate", s.nodeEvaluate)
	write("/v1/node/{id}/purge", s.nodePurge)
}

// nodeEvaluate is PUT|POST /v1/node/:id/evaluate (an ID or a unique
// prefix): evaluations of the jobs the node affects -> {"EvalIDs",
// "EvalCreateIndex", "NodeModifyIndex", "Index"}.
func (s *Server) nodeEvaluate(w http.ResponseWriter, req *http.Request) (any, error) {
	node, err := s.lookupNode(req, req.PathValue("id"), structs.QueryOptions{})
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodeEvaluate.Call(req.Context(), s.rpc, &structs.NodeEvaluateRequest{NodeID: node.Node.ID})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return drainResponse(resp), nil
}

// nodePurge is PUT|POST /v1/node/:id/purge (an ID or a unique prefix):
// the node is removed, its running allocations marked lost and replaced
// -> {"EvalIDs", "EvalCreateIndex", "NodeModifyIndex", "Index"}.
func (s *Server) nodePurge(w http.ResponseWriter, req *http.Request) (any, error) {
	node, err := s.lookupNode(req, req.PathValue("id"), structs.QueryOptions{})
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodePurge.Call(req.Context(), s.rpc, &structs.NodePurgeRequest{NodeID: node.Node.ID})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return drainResponse(resp), nil
}
