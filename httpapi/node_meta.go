package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// registerNodeMetaRoutes adds /v1/client/metadata: a node's metadata,
// read (GET, ?node_id= names another node) and changed (POST or PUT, the
// body's NodeID names another node), served by the node's own agent.
func (s *Server) registerNodeMetaRoutes(rt *router) {
	rt.handle("/v1/client/metadata", s.wrap(s.nodeMetaRead), http.MethodGet)
	rt.handle("/v1/client/metadata", s.forwardByBodyNodeID(s.wrap(s.nodeMetaApply)), http.MethodPost, http.MethodPut)
}

// nodeMetaRead is GET /v1/client/metadata: the node's merged, dynamic and
// static metadata.
func (s *Server) nodeMetaRead(_ http.ResponseWriter, _ *http.Request) (any, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	return apiNodeMeta(nc.NodeMeta()), nil
}

// nodeMetaApply is POST /v1/client/metadata: it applies the body's Meta
// (a value sets a key, null unsets it) to this node's dynamic metadata.
func (s *Server) nodeMetaApply(_ http.ResponseWriter, req *http.Request) (any, error) {
	body, err := decodeNodeMetaApply(req)
	if err != nil {
		return nil, err
	}
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	if body.NodeID != "" && !strings.HasPrefix(nc.NodeID(), body.NodeID) {
		// Only a request forwarded to this agent gets here with another
		// node's ID: a request crosses one hop at most.
		return nil, newHTTPError(http.StatusBadRequest,
			"this agent runs node %s, not %s: send the request to the agent of node %s",
			shortNodeID(nc.NodeID()), body.NodeID, body.NodeID)
	}
	out, err := nc.ApplyNodeMeta(body.Meta)
	if err != nil {
		return nil, err
	}
	return apiNodeMeta(out), nil
}

// nodeMetaApplyShape is the body POST /v1/client/metadata takes, for
// error messages.
const nodeMetaApplyShape = `{"NodeID": "<optional>", "Meta": {"key": "value", "key-to-unset": null}}`

// decodeNodeMetaApply decodes the body of POST /v1/client/metadata,
// saying what is wrong with one that is not of its shape.
func decodeNodeMetaApply(req *http.Request) (*api.NodeMetaApplyRequest, error) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err // *http.MaxBytesError when too large
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '{' {
		return nil, structs.Invalid("request body must be a JSON object: %s", nodeMetaApplyShape)
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	var body struct {
		NodeID string
		Meta   json.RawMessage
	}
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	out := &api.NodeMetaApplyRequest{NodeID: body.NodeID}
	// Only an absent or null Meta is "none": an object of nulls is a list
	// of keys to unset (`node meta apply -unset k`), not an unset field.
	if t := bytes.TrimSpace(body.Meta); len(t) == 0 || string(t) == "null" {
		return out, nil // ApplyNodeMeta refuses a change of nothing
	}
	if t := bytes.TrimSpace(body.Meta); t[0] != '{' {
		return nil, structs.Invalid("request body: Meta must be an object of values by key: %s", nodeMetaApplyShape)
	}
	if err := json.Unmarshal(body.Meta, &out.Meta); err != nil {
		return nil, structs.Invalid("request body: Meta: each value must be a string, or null to unset the key: %v", err)
	}
	return out, nil
}

// apiNodeMeta converts the client's view to the wire's.
func apiNodeMeta(m *structs.NodeMeta) *api.NodeMetaResponse {
	return &api.NodeMetaResponse{Meta: m.Meta, Dynamic: m.Dynamic, Static: m.Static}
}

// forwardByBodyNodeID forwards a request whose JSON body names a node
// ({"NodeID": ...}) other than this agent's to that node's agent, with its
// body, as forwardClientRequests does for a ?node_id=. A body that does
// not parse is left to the endpoint to refuse.
func (s *Server) forwardByBodyNodeID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(forwardedHeader) != "" || req.URL.Query().Get("node_id") != "" {
			next.ServeHTTP(w, req)
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes))
		if err != nil {
			writeError(w, req, err)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(raw))
		var target struct{ NodeID string }
		if json.Unmarshal(raw, &target) != nil || target.NodeID == "" {
			next.ServeHTTP(w, req)
			return
		}
		node, err := s.remoteNode(req, target.NodeID)
		if err != nil {
			writeError(w, req, err)
			return
		}
		if node == nil {
			next.ServeHTTP(w, req)
			return
		}
		s.forwardToNode(w, req, node)
	})
}
