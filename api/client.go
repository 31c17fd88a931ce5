package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is where a local agent listens when nothing else is said.
const DefaultAddress = "http://127.0.0.1:4646"

// Config configures a Client.
type Config struct {
	// Address is the agent's HTTP address, e.g. "http://127.0.0.1:4646".
	Address string
	// Namespace is used by requests whose options name none.
	Namespace string
	// SecretID is sent as X-Nomad-Token when set.
	SecretID string
	// HTTPClient sends the requests; http.DefaultClient's settings (and
	// TLSConfig) when nil.
	HTTPClient *http.Client
	// TLSConfig reaches an agent serving HTTPS (tls.go); ignored with
	// HTTPClient.
	TLSConfig *TLSConfig
}

// DefaultConfig returns a Config whose address comes from DROVER_ADDR, then
// NOMAD_ADDR, then DefaultAddress; its namespace from DROVER_NAMESPACE or
// NOMAD_NAMESPACE; its secret ID from DROVER_TOKEN or NOMAD_TOKEN; its
// TLS from NOMAD_CACERT, NOMAD_CAPATH, NOMAD_CLIENT_CERT,
// NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME and NOMAD_SKIP_VERIFY (or their
// DROVER_ spellings).
func DefaultConfig() *Config {
	return &Config{
		Address:   firstEnv(DefaultAddress, "DROVER_ADDR", "NOMAD_ADDR"),
		Namespace: firstEnv("", "DROVER_NAMESPACE", "NOMAD_NAMESPACE"),
		SecretID:  firstEnv("", "DROVER_TOKEN", "NOMAD_TOKEN"),
		TLSConfig: tlsEnvConfig(),
	}
}

func firstEnv(def string, names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return def
}

// Client talks to one agent's HTTP API. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	namespace string
	secretID  string
	http      *http.Client
	ctx       context.Context
}

// NewClient returns a client for the config; a nil config means
// DefaultConfig(). The address may omit the scheme ("127.0.0.1:4646").
func NewClient(cfg *Config) (*Client, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	addr := cfg.Address
	if addr == "" {
		addr = DefaultAddress
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("parse agent address %q: %w", cfg.Address, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("agent address %q: scheme must be http or https", cfg.Address)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("agent address %q has no host", cfg.Address)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		if hc, err = httpClientFor(cfg.TLSConfig); err != nil {
			return nil, fmt.Errorf("agent address %q: TLS: %w", cfg.Address, err)
		}
	}
	return &Client{base: u, namespace: cfg.Namespace, secretID: cfg.SecretID, http: hc, ctx: context.Background()}, nil
}

// Address returns the agent's base URL.
func (c *Client) Address() string { return c.base.String() }

// WithContext returns a copy of the client whose requests are bound to ctx:
// cancelling ctx aborts them.
func (c *Client) WithContext(ctx context.Context) *Client {
	cc := *c
	cc.ctx = ctx
	return &cc
}

// QueryOptions are the options of a read.
type QueryOptions struct {
	// Namespace to read from; "*" means all. The client's when empty.
	Namespace string
	// Prefix filters list endpoints by ID prefix.
	Prefix string
	// WaitIndex makes the read a blocking query: the agent answers once its
	// index exceeds WaitIndex, or after WaitTime.
	WaitIndex uint64
	// WaitTime bounds a blocking query.
	WaitTime time.Duration
	// AllowStale lets any server answer from its own state (?stale),
	// rather than the leader.
	AllowStale bool
	// Params are extra query parameters.
	Params map[string]string
}

// QueryMeta is what the agent says about a read, from its response headers.
type QueryMeta struct {
	// LastIndex is the index of the data returned: pass it as the next
	// WaitIndex to wait for a change.
	LastIndex uint64
	// KnownLeader reports whether the cluster had a leader.
	KnownLeader bool
	// LastContact is how stale the answering server's data may be.
	LastContact time.Duration
	// RequestTime is how long the request took.
	RequestTime time.Duration
}

// WriteOptions are the options of a write.
type WriteOptions struct {
	// Namespace to write to; the client's when empty.
	Namespace string
}

// WriteMeta is what the agent says about a write.
type WriteMeta struct {
	// LastIndex is the index of the write.
	LastIndex uint64
	// RequestTime is how long the request took.
	RequestTime time.Duration
}

func (c *Client) queryParams(q *QueryOptions) url.Values {
	v := url.Values{}
	ns := c.namespace
	if q != nil {
		if q.Namespace != "" {
			ns = q.Namespace
		}
		if q.Prefix != "" {
			v.Set("prefix", q.Prefix)
		}
		if q.WaitIndex != 0 {
			v.Set("index", strconv.FormatUint(q.WaitIndex, 10))
		}
		if q.WaitTime != 0 {
			v.Set("wait", fmt.Sprintf("%dms", q.WaitTime.Milliseconds()))
		}
		if q.AllowStale {
			v.Set("stale", "")
		}
		for k, p := range q.Params {
			v.Set(k, p)
		}
	}
	if ns != "" {
		v.Set("namespace", ns)
	}
	return v
}

func (c *Client) writeParams(w *WriteOptions) url.Values {
	v := url.Values{}
	ns := c.namespace
	if w != nil && w.Namespace != "" {
		ns = w.Namespace
	}
	if ns != "" {
		v.Set("namespace", ns)
	}
	return v
}

// query GETs endpoint (which may carry its own query string) into out.
func (c *Client) query(endpoint string, out any, q *QueryOptions) (*QueryMeta, error) {
	start := time.Now()
	resp, err := c.do(http.MethodGet, endpoint, c.queryParams(q), nil, out)
	if err != nil {
		return nil, err
	}
	qm := parseQueryMeta(resp.Header)
	qm.RequestTime = time.Since(start)
	return qm, nil
}

// write sends in as JSON with the method and decodes the answer into out.
func (c *Client) write(method, endpoint string, in, out any, w *WriteOptions) (*WriteMeta, error) {
	start := time.Now()
	resp, err := c.do(method, endpoint, c.writeParams(w), in, out)
	if err != nil {
		return nil, err
	}
	wm := &WriteMeta{RequestTime: time.Since(start)}
	wm.LastIndex, _ = strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	return wm, nil
}

func parseQueryMeta(h http.Header) *QueryMeta {
	qm := &QueryMeta{}
	qm.LastIndex, _ = strconv.ParseUint(h.Get("X-Nomad-Index"), 10, 64)
	qm.KnownLeader = h.Get("X-Nomad-KnownLeader") == "true"
	if ms, err := strconv.ParseUint(h.Get("X-Nomad-LastContact"), 10, 64); err == nil {
		qm.LastContact = time.Duration(ms) * time.Millisecond
	}
	return qm
}

// do sends one request. The response body is decoded into out (when out is
// not nil) and closed; a status other than 200 becomes an
// *UnexpectedResponseError carrying the agent's message.
func (c *Client) do(method, endpoint string, params url.Values, in, out any) (*http.Response, error) {
	u, err := c.base.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("build URL for %s: %w", endpoint, err)
	}
	// Merge the endpoint's own query string with the options'.
	merged := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			merged.Add(k, v)
		}
	}
	u.RawQuery = merged.Encode()

	var body io.Reader
	if r, ok := in.(io.Reader); ok {
		body = r // sent as it is (a snapshot archive)
	} else if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode request to %s: %w", endpoint, err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, endpoint, err)
	}
	if _, raw := in.(io.Reader); raw {
		req.Header.Set("Content-Type", "application/octet-stream")
	} else if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.secretID != "" {
		req.Header.Set("X-Nomad-Token", c.secretID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &ConnectError{Address: c.base.String(), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &UnexpectedResponseError{
			Method:     method,
			Path:       u.Path,
			StatusCode: resp.StatusCode,
			Message:    strings.TrimSpace(string(msg)),
		}
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return nil, fmt.Errorf("decode response of %s %s: %w", method, u.Path, err)
		}
	}
	return resp, nil
}
