package client

import (
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// heartbeatLoop registers the node, then heartbeats at about half the TTL
// the servers give, re-registering when they no longer know the node.
func (c *Client) heartbeatLoop() {
	defer c.wg.Done()
	ttl, ok := c.register()
	if !ok {
		return
	}
	c.renewIdentity() // node_identity.go
	failures := 0
	lastOK := c.now() // the last answer of a server
	for {
		wait := heartbeatInterval(ttl, c.jitter)
		if failures > 0 {
			wait = min(wait, backoff(c.retryBase, c.retryMax, failures, c.jitter))
		}
		timer := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		resp, err := rpcapi.NodeUpdateStatus.Call(c.ctx, c.rpc, &structs.NodeUpdateStatusRequest{
			NodeID: c.NodeID(), SecretID: c.secretID(), Status: structs.NodeStatusReady,
		})
		switch {
		case c.ctx.Err() != nil:
			return
		case err != nil && structs.KindOf(err) == structs.KindNotFound:
			c.logger.Warn("servers do not know this node: registering again", "error", err)
			if ttl, ok = c.register(); !ok {
				return
			}
			failures, lastOK = 0, c.now()
			c.renewIdentity()
		case err != nil:
			failures++
			c.logger.Warn("heartbeat failed", "error", err, "failures", failures)
			c.stopDisconnected(c.now().Sub(lastOK)) // disconnect.go
		default:
			failures, lastOK = 0, c.now()
			ttl = resp.HeartbeatTTL
			c.recordHeartbeat(ttl)
			c.renewIdentity()
		}
	}
}

// register registers the node, retrying with backoff until it succeeds
// (true, with the heartbeat TTL) or the client stops (false).
func (c *Client) register() (time.Duration, bool) {
	for attempt := 0; ; attempt++ {
		node := c.Node()
		node.Status = structs.NodeStatusReady
		resp, err := rpcapi.NodeRegister.Call(c.ctx, c.rpc, &structs.NodeRegisterRequest{Node: node})
		if c.ctx.Err() != nil {
			return 0, false
		}
		if err == nil {
			c.updateNode(func(n *structs.Node) { n.Status = structs.NodeStatusReady })
			c.recordHeartbeat(resp.HeartbeatTTL)
			c.registerOnce.Do(func() { close(c.registered) })
			c.logger.Info("node registered", "heartbeat_ttl", resp.HeartbeatTTL)
			return resp.HeartbeatTTL, true
		}
		c.logger.Warn("node registration failed; retrying", "error", err, "attempt", attempt+1)
		timer := time.NewTimer(backoff(c.retryBase, c.retryMax, attempt+1, c.jitter))
		select {
		case <-c.ctx.Done():
			timer.Stop()
			return 0, false
		case <-timer.C:
		}
	}
}

func (c *Client) recordHeartbeat(ttl time.Duration) {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	c.heartbeatTTL = ttl
	c.lastHeartbeat = c.now()
}

// heartbeatInterval is half the TTL, minus up to a tenth of it as jitter,
// so heartbeats from many nodes spread out and never arrive late.
func heartbeatInterval(ttl time.Duration, jitter func(time.Duration) time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = defaultHeartbeatTTL
	}
	return ttl/2 - jitter(ttl/10)
}

// backoff returns the wait before retry number attempt (1-based): base
// doubled each attempt up to max, plus up to a quarter of jitter.
func backoff(base, max time.Duration, attempt int, jitter func(time.Duration) time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d + jitter(d/4)
}
