package rpcclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// Wire constants; they match server.RPCPathPrefix and server.RPCContentType
// (the client does not import the server: a test in package agent checks
// the two sides against each other).
const (
	pathPrefix  = "/rpc/v1/"
	contentType = "application/msgpack"
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
	// CallTimeout bounds one attempt of a non-blocking call.
	CallTimeout time.Duration
	// RetryBase and RetryMax bound the backoff between rounds over the
	// servers; Rounds is how many rounds a call makes before it fails.
	RetryBase time.Duration
	RetryMax  time.Duration
	Rounds    int
}

// Client calls the servers' RPC endpoints. It implements client.RPC and is
// safe for concurrent use.
type Client struct {
	logger      *slog.Logger
	hc          *http.Client
	ownHC       bool
	mh          *codec.MsgpackHandle
	callTimeout time.Duration
	retryBase   time.Duration
	retryMax    time.Duration
	rounds      int

	mu      sync.Mutex // guards the fields below
	servers []string
	next    int // index of the server tried first
}

// New returns a Client of the servers in cfg.
func New(cfg *Config) (*Client, error) {
	if cfg == nil || len(cfg.Servers) == 0 {
		return nil, structs.Invalid("rpc client: at least one server address is required (client { servers = [\"host:4647\"] })")
	}
	c := &Client{
		logger:      cfg.Logger,
		hc:          cfg.HTTPClient,
		mh:          newCodec(),
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
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // cluster traffic never goes through a proxy
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}}
		c.ownHC = true
	}
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

// newCodec returns the msgpack handle of RPC bodies: "codec" tags only,
// as the server's (see server.NewRPCCodec).
func newCodec() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.MapType = reflect.TypeOf(map[string]any(nil))
	h.RawToString = true
	h.Canonical = true
	return h
}

// SetServers replaces the server list.
func (c *Client) SetServers(servers []string) error {
	var clean []string
	for _, s := range servers {
		s = strings.TrimSpace(s)
		s = strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://")
		if s == "" {
			continue
		}
		clean = append(clean, s)
	}
	if len(clean) == 0 {
		return structs.Invalid("rpc client: at least one server address is required")
	}
	c.mu.Lock()
	c.servers = clean
	c.next = 0
	c.mu.Unlock()
	return nil
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

// NodeRegister registers the node.
func (c *Client) NodeRegister(ctx context.Context, req *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
	var out structs.NodeUpdateResponse
	return &out, c.call(ctx, "NodeRegister", req, &out, c.callTimeout)
}

// NodeUpdateStatus heartbeats.
func (c *Client) NodeUpdateStatus(ctx context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
	var out structs.NodeUpdateResponse
	return &out, c.call(ctx, "NodeUpdateStatus", req, &out, c.callTimeout)
}

// NodeGetClientAllocs is a blocking query: its timeout is its wait plus
// some slack, and cancelling ctx ends it on the server too.
func (c *Client) NodeGetClientAllocs(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
	var out structs.NodeClientAllocsResponse
	return &out, c.call(ctx, "NodeGetClientAllocs", req, &out, blockingTimeout(req.MaxQueryTime))
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

// AllocGetAllocs fetches allocations. It is a blocking query when
// req.MinQueryIndex is set (the remote previous-alloc watcher uses it so).
func (c *Client) AllocGetAllocs(ctx context.Context, req *structs.AllocsGetRequest) (*structs.AllocsGetResponse, error) {
	var out structs.AllocsGetResponse
	timeout := c.callTimeout
	if req.MinQueryIndex > 0 {
		timeout = blockingTimeout(req.MaxQueryTime)
	}
	return &out, c.call(ctx, "AllocGetAllocs", req, &out, timeout)
}

// NodeGet reads a node, e.g. to find the HTTP address of the node a
// previous allocation ran on. It is a blocking query when
// req.MinQueryIndex is set.
func (c *Client) NodeGet(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	var out structs.SingleNodeResponse
	timeout := c.callTimeout
	if req.MinQueryIndex > 0 {
		timeout = blockingTimeout(req.MaxQueryTime)
	}
	return &out, c.call(ctx, "NodeGet", req, &out, timeout)
}

// NodeUpdateAlloc reports allocation state.
func (c *Client) NodeUpdateAlloc(ctx context.Context, req *structs.AllocUpdateRequest) (*structs.GenericResponse, error) {
	var out structs.GenericResponse
	return &out, c.call(ctx, "NodeUpdateAlloc", req, &out, c.callTimeout)
}

// call makes rounds over the servers, from the last one that worked, until
// one answers. A server's answer (success or a domain error) ends the
// call; an unreachable or unavailable server moves on to the next, with a
// backoff between rounds.
func (c *Client) call(ctx context.Context, method string, req, out any, timeout time.Duration) error {
	var body bytes.Buffer
	if err := codec.NewEncoder(&body, c.mh).Encode(req); err != nil {
		return fmt.Errorf("rpc %s: encode request: %w", method, err)
	}
	var lastErr error
	backoff := c.retryBase
	for round := 0; round < c.rounds; round++ {
		if round > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("rpc %s: %w (last error: %v)", method, ctx.Err(), lastErr)
			case <-t.C:
			}
			backoff = min(2*backoff, c.retryMax)
		}
		servers := c.Servers()
		for _, addr := range servers {
			err := c.attempt(ctx, addr, method, body.Bytes(), out, timeout)
			if err == nil || !retryable(err) {
				if err == nil {
					c.prefer(addr)
				}
				return err
			}
			if ctx.Err() != nil {
				return fmt.Errorf("rpc %s: %w", method, ctx.Err())
			}
			c.logger.Debug("RPC to server failed, trying the next", "method", method, "server", addr, "error", err)
			lastErr = err
		}
	}
	return structs.NewError(structs.KindUnavailable, "rpc %s: no server answered after %d rounds: %v", method, c.rounds, lastErr)
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

// transportError is a failure to reach a server or to get its answer.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// retryable reports whether another server may succeed where err failed.
func retryable(err error) bool {
	var te *transportError
	if errors.As(err, &te) {
		return true
	}
	return structs.KindOf(err) == structs.KindUnavailable
}

// attempt makes one call to one server.
func (c *Client) attempt(ctx context.Context, addr, method string, body []byte, out any, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "http://" + addr + pathPrefix + method
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("rpc %s: %w", method, err)
	}
	hreq.Header.Set("Content-Type", contentType)
	hreq.Header.Set("Accept", contentType)
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return &transportError{fmt.Errorf("rpc %s to %s: %w", method, addr, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := codec.NewDecoder(resp.Body, c.mh).Decode(out); err != nil {
			return &transportError{fmt.Errorf("rpc %s to %s: decode response: %w", method, addr, err)}
		}
		return nil
	}
	return c.decodeError(resp, method, addr)
}

// wireError is the body of a failed call (server.RPCError).
type wireError struct {
	Kind    string
	Message string
}

// decodeError turns a non-200 answer into an error of the server's kind.
func (c *Client) decodeError(resp *http.Response, method, addr string) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return &transportError{fmt.Errorf("rpc %s to %s: read error response: %w", method, addr, err)}
	}
	var we wireError
	if resp.Header.Get("Content-Type") != contentType || codec.NewDecoderBytes(raw, c.mh).Decode(&we) != nil || we.Kind == "" {
		// Not an answer from a drover server (a proxy, an older agent).
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return &transportError{fmt.Errorf("rpc %s to %s: HTTP %d: %s", method, addr, resp.StatusCode, msg)}
	}
	return &structs.KindError{Kind: parseKind(we.Kind), Msg: we.Message}
}

// parseKind maps an ErrorKind's name back to the kind.
func parseKind(name string) structs.ErrorKind {
	for _, k := range []structs.ErrorKind{structs.KindInvalid, structs.KindNotFound, structs.KindConflict, structs.KindUnavailable, structs.KindPermission} {
		if k.String() == name {
			return k
		}
	}
	return structs.KindInternal
}
