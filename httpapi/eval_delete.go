package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerEvalDeleteRoute registers DELETE /v1/evaluations.
func (s *Server) registerEvalDeleteRoute(rt *router) {
	rt.handle("/v1/evaluations", s.wrap(s.evalDelete), http.MethodDelete)
}

// evalDelete is DELETE /v1/evaluations {"EvalIDs": [...]} or {"Filter":
// "..."}: delete evaluations while the eval broker is paused ->
// {"Count"}.
func (s *Server) evalDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		EvalIDs   []string
		Filter    string
		Region    string
		Namespace string
		SecretID  string
	}
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	resp, err := rpcapi.EvalDelete.Call(req.Context(), s.rpc, &structs.EvalDeleteRequest{EvalIDs: body.EvalIDs, Filter: body.Filter})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return struct{ Count int }{resp.Count}, nil
}
