package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// allocList is GET /v1/allocations[?resources=true]: []AllocListStub.
func (s *Server) allocList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resources, err := boolParam(req, "resources")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.AllocList.Call(req.Context(), s.rpc, &structs.AllocListRequest{Resources: resources, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Allocations), nil
}

// allocGet is GET /v1/allocation/:id (an ID or a unique prefix): Allocation.
func (s *Server) allocGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	id := req.PathValue("id")
	resp, err := rpcapi.AllocGet.Call(req.Context(), s.rpc, &structs.AllocSpecificRequest{AllocID: id, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	if resp.Alloc == nil {
		return nil, structs.NotFound("allocation", id)
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp.Alloc, nil
}

// evalList is GET /v1/evaluations: []Evaluation.
func (s *Server) evalList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.EvalList.Call(req.Context(), s.rpc, &structs.EvalListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Evaluations), nil
}

// evalGet is GET /v1/evaluation/:id[?related=true] (an ID or a unique
// prefix): Evaluation, with RelatedEvals when asked.
func (s *Server) evalGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	related, err := boolParam(req, "related")
	if err != nil {
		return nil, err
	}
	resp, err := s.lookupEval(req, req.PathValue("id"), related, opts)
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	if related {
		return evalView{Evaluation: resp.Eval, RelatedEvals: nonNil(resp.Related)}, nil
	}
	return resp.Eval, nil
}

// evalView is an Evaluation with its related evaluations
// (?related=true), as Nomad's API shows them.
type evalView struct {
	*structs.Evaluation
	RelatedEvals []*structs.EvaluationStub
}

func (s *Server) lookupEval(req *http.Request, id string, related bool, opts structs.QueryOptions) (*structs.SingleEvalResponse, error) {
	resp, err := rpcapi.EvalGet.Call(req.Context(), s.rpc, &structs.EvalSpecificRequest{EvalID: id, IncludeRelated: related, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	if resp.Eval == nil {
		return nil, structs.NotFound("evaluation", id)
	}
	return resp, nil
}

// evalAllocations is GET /v1/evaluation/:id/allocations: the
// []AllocListStub the evaluation placed.
func (s *Server) evalAllocations(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.EvalAllocations.Call(req.Context(), s.rpc, &structs.EvalSpecificRequest{EvalID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Allocations), nil
}

// nodeList is GET /v1/nodes[?resources=true]: []NodeListStub.
func (s *Server) nodeList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resources, err := boolParam(req, "resources")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodeList.Call(req.Context(), s.rpc, &structs.NodeListRequest{Resources: resources, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Nodes), nil
}

// nodeGet is GET /v1/node/:id (an ID or a unique prefix): Node.
func (s *Server) nodeGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := s.lookupNode(req, req.PathValue("id"), opts)
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nodeView{Node: resp.Node}, nil
}

// nodeView is a Node as the API shows it: with its SecretID field present
// and empty, as Nomad's (clients read the key), never the secret.
type nodeView struct {
	*structs.Node
	SecretID string
}

func (s *Server) lookupNode(req *http.Request, id string, opts structs.QueryOptions) (*structs.SingleNodeResponse, error) {
	resp, err := rpcapi.NodeGet.Call(req.Context(), s.rpc, &structs.NodeSpecificRequest{NodeID: id, QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	if resp.Node == nil {
		return nil, structs.NotFound("node", id)
	}
	return resp, nil
}

// nodeAllocations is GET /v1/node/:id/allocations: the []Allocation placed
// on the node, in every namespace.
func (s *Server) nodeAllocations(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodeAllocations.Call(req.Context(), s.rpc, &structs.NodeSpecificRequest{NodeID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return nonNil(resp.Allocs), nil
}
