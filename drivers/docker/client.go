package docker

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// API versions this client speaks. The client uses the daemon's version
// when it is lower than maxAPIVersion, and refuses daemons older than
// minAPIVersion. Every request and response field used here exists, with
// the same meaning, across that range.
const (
	minAPIVersion = "1.40" // Docker 19.03
	maxAPIVersion = "1.47" // Docker 27.x
)

// DefaultEndpoint is the daemon address used when none is configured.
const DefaultEndpoint = "unix:///var/run/docker.sock"

// apiError is an error status from the Engine API.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("docker: %s (HTTP %d)", e.Message, e.Status)
}

// statusOf returns err's HTTP status when it is an apiError, else 0.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// errUnsupportedAPI marks a daemon whose API versions this client cannot
// speak.
var errUnsupportedAPI = errors.New("unsupported Docker API version")

func isNotFound(err error) bool    { return statusOf(err) == http.StatusNotFound }
func isConflict(err error) bool    { return statusOf(err) == http.StatusConflict }
func isNotModified(err error) bool { return statusOf(err) == http.StatusNotModified }

// client is a minimal Docker Engine API client: the endpoints the driver
// uses, with API version negotiation. It is safe for concurrent use.
type client struct {
	endpoint string
	base     string // "http://docker", "http://host:port" or "https://host:port"
	hc       *http.Client
	tr       *http.Transport

	mu      sync.Mutex // guards the field below
	version string     // negotiated API version, "" until negotiated
}

// newClient returns a client for endpoint: "unix:///path/to/docker.sock",
// "tcp://host:port" or "http://host:port" (plain HTTP unless tlsConf is
// set), or "https://host:port". tlsConf (nil: none) secures tcp, http and
// https endpoints; it must be nil for unix sockets.
func newClient(endpoint string, tlsConf *tls.Config) (*client, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("docker endpoint %q: %w", endpoint, err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second}
	c := &client{endpoint: endpoint, tr: tr, hc: &http.Client{Transport: tr}}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Host
		}
		if path == "" {
			return nil, fmt.Errorf("docker endpoint %q: missing socket path", endpoint)
		}
		if tlsConf != nil {
			return nil, fmt.Errorf("docker endpoint %q: TLS needs a tcp:// endpoint", endpoint)
		}
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		}
		c.base = "http://docker"
	case "tcp", "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("docker endpoint %q: missing host", endpoint)
		}
		if u.Scheme == "https" && tlsConf == nil {
			tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if tlsConf != nil {
			tr.TLSClientConfig = tlsConf
			c.base = "https://" + u.Host
		} else {
			c.base = "http://" + u.Host
		}
	default:
		return nil, fmt.Errorf("docker endpoint %q: unsupported scheme %q (use unix:// or tcp://)", endpoint, u.Scheme)
	}
	return c, nil
}

// close releases idle connections.
func (c *client) close() { c.tr.CloseIdleConnections() }

// versionInfo is the part of GET /version the driver uses.
type versionInfo struct {
	Version       string `json:"Version"`
	APIVersion    string `json:"ApiVersion"`
	MinAPIVersion string `json:"MinAPIVersion"`
	Os            string `json:"Os"`
	Arch          string `json:"Arch"`
	KernelVersion string `json:"KernelVersion"`
}

// serverVersion calls the unversioned GET /version and negotiates the API
// version from its answer.
func (c *client) serverVersion(ctx context.Context) (*versionInfo, error) {
	var v versionInfo
	if err := c.doJSON(ctx, http.MethodGet, "/version", nil, nil, &v, false); err != nil {
		return nil, err
	}
	ver, err := negotiate(v.APIVersion, v.MinAPIVersion)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.version = ver
	c.mu.Unlock()
	return &v, nil
}

// negotiate picks the API version to use with a daemon that speaks
// server (and nothing below serverMin).
func negotiate(server, serverMin string) (string, error) {
	if server == "" {
		return "", errors.New("docker: daemon reported no API version")
	}
	ver := maxAPIVersion
	if compareVersions(server, ver) < 0 {
		ver = server
	}
	if compareVersions(ver, minAPIVersion) < 0 {
		return "", fmt.Errorf("docker: daemon API version %s is older than the oldest supported, %s: %w", server, minAPIVersion, errUnsupportedAPI)
	}
	if serverMin != "" && compareVersions(ver, serverMin) < 0 {
		return "", fmt.Errorf("docker: daemon requires API version %s or newer; this driver speaks up to %s: %w", serverMin, maxAPIVersion, errUnsupportedAPI)
	}
	return ver, nil
}

// compareVersions compares dotted versions ("1.41") numerically.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// apiVersion returns the negotiated version, negotiating on first use.
func (c *client) apiVersion(ctx context.Context) (string, error) {
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v != "" {
		return v, nil
	}
	if _, err := c.serverVersion(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, nil
}

// do sends a request and returns the response for a 2xx status; any other
// status is returned as an *apiError with the body closed. versioned
// prefixes the path with the negotiated API version. The caller closes the
// returned body.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body io.Reader, contentType string, versioned bool) (*http.Response, error) {
	return c.doHeader(ctx, method, path, query, body, http.Header{"Content-Type": nonEmpty(contentType)}, versioned)
}

// nonEmpty is a header value list of s, or none for "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// doHeader is do with request headers.
func (c *client) doHeader(ctx context.Context, method, path string, query url.Values, body io.Reader, header http.Header, versioned bool) (*http.Response, error) {
	u := c.base
	if versioned {
		v, err := c.apiVersion(ctx)
		if err != nil {
			return nil, err
		}
		u += "/v" + v
	}
	u += path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("docker: build request: %w", err)
	}
	for k, v := range header {
		for _, vv := range v {
			req.Header.Add(k, vv)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("docker: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Message == "" {
		msg.Message = strings.TrimSpace(string(b))
	}
	if msg.Message == "" {
		msg.Message = http.StatusText(resp.StatusCode)
	}
	return nil, &apiError{Status: resp.StatusCode, Message: msg.Message}
}

// doJSON sends in (when not nil) as JSON and decodes the answer into out
// (when not nil).
func (c *client) doJSON(ctx context.Context, method, path string, query url.Values, in, out any, versioned bool) error {
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("docker: encode %s %s: %w", method, path, err)
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, method, path, query, body, ct, versioned)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("docker: decode %s %s: %w", method, path, err)
	}
	return nil
}
