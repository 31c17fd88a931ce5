package rpcclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// Defaults of Config.
const (
	DefaultCallTimeout = 30 * time.Second
	DefaultRetryBase   = 250 * time.Millisecond
	DefaultRetryMax    = 5 * time.Second
	DefaultRounds      = 3
	// dialTimeout bounds connecting to one server, so that an unreachable
	// one is skipped quickly even for a blocking query.
	dialTimeout = 5 * time.Second
	// blockingSlack is added to a blocking query's wait for its timeout.
	blockingSlack = 30 * time.Second
)

// Config configures a Client.
type Config struct {
	// Servers are the servers' RPC addresses ("10.0.0.1:4647"); at least one.
	Servers []string
	Logger  *slog.Logger
	// HTTPClient makes the calls; nil uses a private one.
	HTTPClient *http.Client
	// TLS, when set, makes the private HTTP client's connections mutual
	// TLS with this config (the agent's tls.rpc); ignored with HTTPClient.
	TLS *tls.Config
	// CallTimeout bounds one attempt of a non-blocking call.
	CallTimeout time.Duration
	// RetryBase and RetryMax bound the backoff between rounds over the
	// servers; Rounds is how many rounds a call makes before it fails.
	RetryBase time.Duration
	RetryMax  time.Duration
	Rounds    int
}

// Client calls the servers' methods over the network: an rpcapi.Conn with
// failover between servers and retries of what is safe to repeat. It is
// safe for concurrent use.
type Client struct {
	logger      *slog.Logger
	hc          *http.Client
	ownHC       bool
	wire        *rpcapi.Transport
	callTimeout time.Duration
	retryBase   time.Duration
	retryMax    time.Duration
	rounds      int

	mu      sync.Mutex // guards the fields below
	servers []string
	next    int // index of the server tried first
	// lastOK is when a server last answered (success or a domain error),
	// zero before; lastFailed says whether the latest round failed.
	lastOK     time.Time
	lastFailed bool
}

// DefaultServerPort is the port of a server address given without one.
const DefaultServerPort = "4647"

// New returns a Client of the servers in cfg.
func New(cfg *Config) (*Client, error) {
	if cfg == nil || len(cfg.Servers) == 0 {
		return nil, structs.Invalid("rpc client: at least one server address is required (client { servers = [\"host:4647\"] })")
	}
	c := &Client{
		logger:      cfg.Logger,
		hc:          cfg.HTTPClient,
		callTimeout: cfg.CallTimeout,
		retryBase:   cfg.RetryBase,
		retryMax:    cfg.RetryMax,
		rounds:      cfg.Rounds,
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.hc == nil {
		dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
		dial := dialer.DialContext
		if cfg.TLS != nil {
			dial = tlsutil.DialContext(dialer, cfg.TLS)
		}
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // cluster traffic never goes through a proxy
			DialContext:         dial,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}}
		c.ownHC = true
	}
	c.wire = rpcapi.NewTransport(c.hc)
	if c.callTimeout <= 0 {
		c.callTimeout = DefaultCallTimeout
	}
	if c.retryBase <= 0 {
		c.retryBase = DefaultRetryBase
	}
	if c.retryMax <= 0 {
		c.retryMax = DefaultRetryMax
	}
	if c.rounds <= 0 {
		c.rounds = DefaultRounds
	}
	if err := c.SetServers(cfg.Servers); err != nil {
		return nil, err
	}
	return c, nil
}

// SetServers replaces the server list.
func (c *Client) SetServers(servers []string) error {
	var clean []string
	seen := map[string]bool{}
	for _, s := range servers {
		s = strings.TrimSpace(s)
		s = strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://")
		if s == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(strings.Trim(s, "[]"), DefaultServerPort)
		}
		if !seen[s] {
			seen[s] = true
			clean = append(clean, s)
		}
	}
	if len(clean) == 0 {
		return structs.Invalid("rpc client: at least one server address is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Keep trying first the server that answered last, if still listed.
	first := ""
	if len(c.servers) > 0 {
		first = c.servers[c.next%len(c.servers)]
	}
	c.servers = clean
	c.next = 0
	for i, s := range clean {
		if s == first {
			c.next = i
		}
	}
	return nil
}

// Contact reports whether the last call reached a server, and how long
// ago a server last answered (0 before any).
func (c *Client) Contact() (bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastOK.IsZero() {
		return false, 0
	}
	return !c.lastFailed, time.Since(c.lastOK)
}

// answered records that a server answered (ok) or that a round failed.
func (c *Client) answered(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastFailed = !ok
	if ok {
		c.lastOK = time.Now()
	}
}

// Servers returns the server list, the one tried first at its head.
func (c *Client) Servers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.servers))
	for i := range c.servers {
		out = append(out, c.servers[(c.next+i)%len(c.servers)])
	}
	return out
}

// Close releases idle connections.
func (c *Client) Close() {
	if c.ownHC {
		c.hc.CloseIdleConnections()
	}
}

var _ rpcapi.Conn = (*Client)(nil)

// Invoke implements rpcapi.Conn: it calls method m with req on the servers,
// failing over between them. A server's answer (success or a domain error,
// its kind preserved) ends the call; an unreachable or unavailable server
// moves on to the next, with a backoff between rounds, as long as the call
// is safe to send again (m's Class): a call that may have reached a server
// is repeated only if it is a read, an idempotent write, or a deduplicated
// write, whose request gets a request ID here (on a copy) when it has
// none, the same for every attempt. A blocking query's attempt lasts its
// wait plus some slack; cancelling ctx ends the call, and the query on the
// server with it.
func (c *Client) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	req, _ = m.WithRequestID(req)
	return c.call(ctx, m, req, c.timeoutOf(m, req))
}

// timeoutOf returns the attempt timeout of a call of m with req: a
// blocking query's wait plus slack, else the call timeout.
func (c *Client) timeoutOf(m *rpcapi.Info, req any) time.Duration {
	if q := m.Query(req); q != nil && q.MinQueryIndex > 0 {
		return blockingTimeout(q.MaxQueryTime)
	}
	return c.callTimeout
}

// blockingTimeout is the call timeout of a blocking query that waits up to
// wait on the server: the (bounded) wait plus the server's jitter and slack.
func blockingTimeout(wait time.Duration) time.Duration {
	if wait <= 0 {
		wait = structs.DefaultBlockingWait
	}
	if wait > structs.MaxBlockingWait {
		wait = structs.MaxBlockingWait
	}
	return wait + wait/16 + blockingSlack
}

// call makes rounds over the servers, from the last one that worked, until
// one answers or the call is not safe to send again.
func (c *Client) call(ctx context.Context, m *rpcapi.Info, req any, timeout time.Duration) (any, error) {
	method := m.Name()
	body, err := c.wire.Encode(m, req)
	if err != nil {
		return nil, err
	}
	var lastErr error
	backoff := c.retryBase
	for round := 0; round < c.rounds; round++ {
		if round > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("rpc %s: %w (last error: %v)", method, ctx.Err(), lastErr)
			case <-t.C:
			}
			backoff = min(2*backoff, c.retryMax)
		}
		for _, addr := range c.Servers() {
			out, err := c.attempt(ctx, addr, m, body, timeout)
			if err == nil {
				c.prefer(addr)
				c.answered(true)
				return out, nil
			}
			var te *rpcapi.TransportError
			c.answered(!errors.As(err, &te) && structs.KindOf(err) != structs.KindUnavailable)
			if !rpcapi.MayRetry(m, err) {
				if errors.As(err, &te) {
					// A write that must not be sent twice, and may have
					// been applied: say so, rather than fail as internal.
					return nil, structs.NewError(structs.KindUnavailable,
						"%v: the server may have applied it; check before sending it again", err)
				}
				return nil, err
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("rpc %s: %w", method, ctx.Err())
			}
			c.logger.Debug("RPC to server failed, trying the next", "method", method, "server", addr, "error", err)
			lastErr = err
		}
	}
	return nil, structs.NewError(structs.KindUnavailable, "rpc %s: no server answered after %d rounds: %v", method, c.rounds, lastErr)
}

// prefer makes addr the server tried first.
func (c *Client) prefer(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.servers {
		if s == addr {
			c.next = i
			return
		}
	}
}

// attempt makes one call to one server.
func (c *Client) attempt(ctx context.Context, addr string, m *rpcapi.Info, body []byte, timeout time.Duration) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.wire.Post(ctx, addr, m, body)
}
