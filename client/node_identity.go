package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// identityWait bounds how long a read of the node's identity waits for the
// first one, which the client asks for right after it registers.
const identityWait = 10 * time.Second

// nodeIdentity is the node's identity: a JWT the servers signed for it
// (NodeSignIdentity), kept in memory. The client asks for a new one when
// it registers (so every agent start gets one), halfway to the expiry of
// the one it holds, and when an operator asks (/v1/client/identity/renew),
// always on the heartbeat that follows. Its zero value holds none.
type nodeIdentity struct {
	mu sync.Mutex // guards the fields below
	// jwt is the identity; issued and expiry are its Unix seconds.
	jwt            string
	issued, expiry int64
	// forced marks a renewal an operator asked for.
	forced bool
	// got is closed once the first identity is stored (made lazily).
	got chan struct{}
}

// needsRenewal reports whether the client must ask for a new identity at
// now: it has none, an operator asked, or half its lifetime has passed.
func (n *nodeIdentity) needsRenewal(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.jwt == "" || n.forced {
		return true
	}
	return now.Unix() >= n.issued+(n.expiry-n.issued)/2
}

// store keeps a newly signed identity and ends a forced renewal.
func (n *nodeIdentity) store(resp *structs.NodeSignIdentityResponse) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.jwt, n.issued, n.expiry, n.forced = resp.JWT, resp.IssuedAt, resp.Expiry, false
	if n.got == nil {
		n.got = make(chan struct{})
	}
	select {
	case <-n.got:
	default:
		close(n.got)
	}
}

// force asks for a renewal on the next heartbeat.
func (n *nodeIdentity) force() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forced = true
}

// wait returns the identity, waiting for the first one until ctx ends.
func (n *nodeIdentity) wait(ctx context.Context) (string, error) {
	n.mu.Lock()
	if n.jwt != "" {
		defer n.mu.Unlock()
		return n.jwt, nil
	}
	if n.got == nil {
		n.got = make(chan struct{})
	}
	got := n.got
	n.mu.Unlock()
	select {
	case <-got:
	case <-ctx.Done():
		return "", structs.NewError(structs.KindUnavailable, "this node has no identity yet: it gets one from the servers once registered; retry")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.jwt, nil
}

// renewIdentity asks the servers for a new identity when the node needs
// one (needsRenewal); a failure is logged and retried on the next
// heartbeat, the identity held kept meanwhile.
func (c *Client) renewIdentity() {
	if !c.identity.needsRenewal(c.now()) {
		return
	}
	resp, err := rpcapi.NodeSignIdentity.Call(c.ctx, c.rpc, &structs.NodeSignIdentityRequest{
		NodeID: c.NodeID(), SecretID: c.secretID(), QueryOptions: structs.QueryOptions{Region: c.region},
	})
	if err != nil {
		if c.ctx.Err() == nil {
			c.logger.Warn("node identity not renewed; retrying on the next heartbeat", "error", err)
		}
		return
	}
	c.identity.store(resp)
	c.logger.Debug("node identity renewed", "expiry", time.Unix(resp.Expiry, 0).UTC())
}

// NodeIdentityClaims returns the claims of the node's identity (its JWT's
// payload, as the servers signed it), waiting a little for the first one
// after the node registers.
func (c *Client) NodeIdentityClaims(ctx context.Context) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, identityWait)
	defer cancel()
	jwt, err := c.identity.wait(ctx)
	if err != nil {
		return nil, err
	}
	return jwtClaims(jwt)
}

// RenewNodeIdentity has the client ask for a new identity on its next
// heartbeat.
func (c *Client) RenewNodeIdentity() { c.identity.force() }

// jwtClaims decodes a JWT's payload without verifying it: the node's own
// identity, received from the servers over the authenticated RPC.
func jwtClaims(jwt string) (map[string]any, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("node identity is not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("node identity payload: %w", err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(b, &claims); err != nil {
		return nil, fmt.Errorf("node identity claims: %w", err)
	}
	return claims, nil
}
