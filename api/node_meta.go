package api

import "net/http"

// NodeMetaApplyRequest changes a node's dynamic metadata (POST
// /v1/client/metadata).
type NodeMetaApplyRequest struct {
	// NodeID is the node to change; empty: the node of the agent that
	// receives the request.
	NodeID string
	// Meta sets a key to a value, or unsets it with nil (JSON null).
	Meta map[string]*string
}

// NodeMetaResponse is a node's metadata as its client holds it.
type NodeMetaResponse struct {
	// Meta is Static with Dynamic applied: the node's Meta.
	Meta map[string]string
	// Dynamic is the metadata applied at run time: nil unsets a key.
	Dynamic map[string]*string
	// Static is the metadata of the agent's configuration, with the
	// client's default keys.
	Static map[string]string
}

// NodeMeta reads and changes nodes' dynamic metadata. Get one with
// Nodes.Meta.
type NodeMeta struct{ c *Client }

// Meta returns the node metadata endpoints.
func (n *Nodes) Meta() *NodeMeta { return &NodeMeta{c: n.c} }

// Apply changes the dynamic metadata of the node req names (the
// receiving agent's node when it names none) and returns the node's
// metadata after the change.
func (m *NodeMeta) Apply(req *NodeMetaApplyRequest, w *WriteOptions) (*NodeMetaResponse, error) {
	var out NodeMetaResponse
	if _, err := m.c.write(http.MethodPost, "/v1/client/metadata", req, &out, w); err != nil {
		return nil, err
	}
	return &out, nil
}

// Read returns the metadata of the node nodeID (the receiving agent's
// node when empty), from its client.
func (m *NodeMeta) Read(nodeID string, q *QueryOptions) (*NodeMetaResponse, error) {
	qo := QueryOptions{}
	if q != nil {
		qo = *q
	}
	params := map[string]string{}
	for k, v := range qo.Params {
		params[k] = v
	}
	if nodeID != "" {
		params["node_id"] = nodeID
	}
	qo.Params = params
	var out NodeMetaResponse
	if _, err := m.c.query("/v1/client/metadata", &out, &qo); err != nil {
		return nil, err
	}
	return &out, nil
}
