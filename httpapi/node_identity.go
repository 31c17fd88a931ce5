package httpapi

import (
	"net/http"
	"strings"

	"github.com/drover-io/drover/structs"
)

// registerNodeIdentityRoutes adds the node identity endpoints, as Nomad's:
// a ?node_id of another node is served by that node's agent
// (client_forward.go).
func (s *Server) registerNodeIdentityRoutes(rt *router) {
	rt.handle("/v1/client/identity", s.wrap(s.nodeIdentityGet), http.MethodGet)
	rt.handle("/v1/client/identity/renew", s.wrap(s.nodeIdentityRenew), http.MethodPut, http.MethodPost)
}

// nodeIdentityResponse is Nomad's NodeIdentityGetResponse.
type nodeIdentityResponse struct {
	Claims map[string]any
}

// nodeIdentityGet is GET /v1/client/identity[?node_id=]: the claims of
// the node's identity (docs/identity.md, "Node identities").
func (s *Server) nodeIdentityGet(_ http.ResponseWriter, req *http.Request) (any, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	claims, err := nc.NodeIdentityClaims(req.Context())
	if err != nil {
		return nil, err
	}
	return &nodeIdentityResponse{Claims: claims}, nil
}

// nodeIdentityRenewRequest is Nomad's NodeIdentityRenewRequest.
type nodeIdentityRenewRequest struct {
	NodeID string
}

// nodeIdentityRenew is PUT|POST /v1/client/identity/renew[?node_id=]: the
// node asks the servers for a new identity on its next heartbeat. The
// body's NodeID, when set, must name this agent's node.
func (s *Server) nodeIdentityRenew(_ http.ResponseWriter, req *http.Request) (any, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	var body nodeIdentityRenewRequest
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	if body.NodeID != "" && !strings.HasPrefix(nc.NodeID(), body.NodeID) {
		return nil, structs.Invalid("node %q is not this agent's node (%s): renew its identity with ?node_id=%s, which is forwarded to its agent",
			body.NodeID, nc.NodeID(), body.NodeID)
	}
	nc.RenewNodeIdentity()
	return struct{}{}, nil
}
