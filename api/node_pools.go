package api

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// NodePool groups nodes: a job is placed only on its pool's nodes.
type NodePool struct {
	Name        string            `hcl:"name,label"`
	Description string            `hcl:"description,optional"`
	Meta        map[string]string `hcl:"meta,block"`
	// SchedulerConfiguration is Nomad's (enterprise) per-pool scheduler
	// configuration; drover refuses it.
	SchedulerConfiguration json.RawMessage `json:",omitempty" hcl:"-"`
	// NodeIdentityTTL is Nomad's lifetime of node identities ("" or 0
	// when unset); drover has none and refuses another value.
	NodeIdentityTTL json.RawMessage `json:",omitempty" hcl:"-"`
	CreateIndex     uint64          `hcl:"-"`
	ModifyIndex     uint64          `hcl:"-"`
}

// NodePools manages node pools.
type NodePools struct{ c *Client }

// NodePools returns the node pool endpoints.
func (c *Client) NodePools() *NodePools { return &NodePools{c: c} }

// List lists the node pools whose name starts with q.Prefix, by name.
func (n *NodePools) List(q *QueryOptions) ([]*NodePool, *QueryMeta, error) {
	var out []*NodePool
	qm, err := n.c.query("/v1/node/pools", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one node pool; IsNotFound(err) when there is none.
func (n *NodePools) Info(name string, q *QueryOptions) (*NodePool, *QueryMeta, error) {
	var out NodePool
	qm, err := n.c.query("/v1/node/pool/"+url.PathEscape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// ListNodes lists the stubs of a pool's nodes.
func (n *NodePools) ListNodes(name string, q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var out []*NodeListStub
	qm, err := n.c.query("/v1/node/pool/"+url.PathEscape(name)+"/nodes", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Register creates or updates a node pool; the built-in ones cannot be.
func (n *NodePools) Register(p *NodePool, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodPut, "/v1/node/pools", p, nil, w)
}

// Delete deletes a node pool; the agent refuses the built-in ones, and
// one that still holds nodes or jobs that are not dead.
func (n *NodePools) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodDelete, "/v1/node/pool/"+url.PathEscape(name), nil, nil, w)
}
