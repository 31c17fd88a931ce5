package rpcclient

import (
	"context"
	"time"
)

// Call calls the server method (a path under /rpc/v1/) with req and
// decodes its answer into out, with the client's failover over servers: a
// server's answer (success or a domain error, its kind preserved) ends the
// call; an unreachable one moves on to the next. timeout bounds one
// attempt; 0 means the configured CallTimeout. A blocking query passes
// BlockingTimeout(its wait); cancelling ctx ends the call, and the query
// on the server with it. A client-only agent forwards its HTTP API so.
func (c *Client) Call(ctx context.Context, method string, req, out any, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = c.callTimeout
	}
	return c.call(ctx, method, req, out, timeout)
}

// BlockingTimeout is the attempt timeout of a blocking query that waits
// up to wait on the server (0: the default wait): the bounded wait plus
// the server's jitter and some slack.
func BlockingTimeout(wait time.Duration) time.Duration { return blockingTimeout(wait) }
