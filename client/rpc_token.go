package client

import (
	"context"

	"github.com/drover-io/drover/rpcapi"
)

// nodeTokenConn sends the node's secret ID as the ACL token of every call
// that carries none: with ACLs enabled, the servers authorize the node's
// own reads (a previous allocation's node, services, variables for
// templates) by it.
type nodeTokenConn struct {
	conn   rpcapi.Conn
	secret func() string
}

// Invoke implements rpcapi.Conn.
func (n nodeTokenConn) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	if rpcapi.AuthToken(ctx) == "" {
		if s := n.secret(); s != "" {
			ctx = rpcapi.WithAuthToken(ctx, s)
		}
	}
	return n.conn.Invoke(ctx, m, req)
}

// nodeSecret returns the node's secret ID, "" before the node is set up.
func (c *Client) nodeSecret() string {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	if c.node == nil {
		return ""
	}
	return c.node.SecretID
}

// NodeSecret returns the node's secret ID ("" before the node is set up),
// for the agent's API to read as the node on behalf of a task whose
// request the servers authorized.
func (c *Client) NodeSecret() string { return c.nodeSecret() }
