package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// NodePool groups nodes: a job is placed only on its pool's nodes.
type NodePool struct {
	Name        string            `hcl:"name,label"`
	Description string            `hcl:"description,optional"`
	Meta        map[string]string `hcl:"meta,block"`
	// SchedulerConfiguration is Nomad's (enterprise) per-pool scheduler
	// configuration; drover refuses it.
	SchedulerConfiguration json.RawMessage `json:",omitempty" hcl:"-"`
	// NodeIdentityTTL is the lifetime of the identities of the pool's
	// nodes (0: the servers' default, 24h). On the wire it is a duration
	// string ("720h0m0s"), "" when unset, as Nomad's; a number of
	// nanoseconds is read too.
	NodeIdentityTTL time.Duration `hcl:"-"`
	CreateIndex     uint64        `hcl:"-"`
	ModifyIndex     uint64        `hcl:"-"`
}

// nodePoolJSON is NodePool with its TTL as it travels.
type nodePoolJSON struct {
	*nodePoolFields
	NodeIdentityTTL any
}

// nodePoolFields is NodePool without its JSON methods.
type nodePoolFields NodePool

// MarshalJSON writes NodeIdentityTTL as a duration string, "" when unset.
func (p NodePool) MarshalJSON() ([]byte, error) {
	ttl := ""
	if p.NodeIdentityTTL != 0 {
		ttl = p.NodeIdentityTTL.String()
	}
	return json.Marshal(nodePoolJSON{nodePoolFields: (*nodePoolFields)(&p), NodeIdentityTTL: ttl})
}

// UnmarshalJSON reads NodeIdentityTTL as a duration string or a number of
// nanoseconds.
func (p *NodePool) UnmarshalJSON(b []byte) error {
	aux := nodePoolJSON{nodePoolFields: (*nodePoolFields)(p)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch v := aux.NodeIdentityTTL.(type) {
	case nil:
		p.NodeIdentityTTL = 0
	case string:
		if v == "" {
			p.NodeIdentityTTL = 0
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("node pool NodeIdentityTTL %q: %w", v, err)
		}
		p.NodeIdentityTTL = d
	case float64:
		p.NodeIdentityTTL = time.Duration(v)
	default:
		return fmt.Errorf("node pool NodeIdentityTTL %v: want a duration string such as \"24h\"", v)
	}
	return nil
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
