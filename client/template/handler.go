package template

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// Handler is the Nomad-compatible HTTP API a task's templates read: the
// variables the task may read, and the services of its namespace.
type Handler struct {
	// RPC reads variables from the servers.
	RPC rpcapi.Conn
	// Identity is the task the templates render for.
	Identity structs.WorkloadIdentity
	// ServicesURL is the agent's HTTP API ("http://127.0.0.1:4646"),
	// where service reads are forwarded; empty: services are not found.
	ServicesURL string
	// ServicesTransport sends them; nil: http.DefaultTransport (an
	// HTTPS agent's needs its CA and client certificate).
	ServicesTransport http.RoundTripper
	// ServicesToken is sent as X-Nomad-Token with the forwarded reads.
	ServicesToken string
	// Logger logs refused reads.
	Logger *slog.Logger
}

// ServeHTTP serves GET /v1/var/:path, /v1/vars, /v1/services and
// /v1/service/:name.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeErr(w, http.StatusMethodNotAllowed, "templates only read")
		return
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v1/var/"):
		h.varRead(w, r, strings.TrimPrefix(p, "/v1/var/"))
	case p == "/v1/vars":
		h.varList(w, r)
	case p == "/v1/services" || strings.HasPrefix(p, "/v1/service/"):
		h.services(w, r)
	default:
		writeErr(w, http.StatusNotFound, "templates read only variables and services")
	}
}

// namespace returns the namespace a request asks for: the task's when it
// names none.
func (h *Handler) namespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return h.Identity.Namespace
}

// queryOptions reads a blocking query's index and wait.
func queryOptions(r *http.Request, ns string) (structs.QueryOptions, error) {
	q := r.URL.Query()
	opts := structs.QueryOptions{Namespace: ns, Region: q.Get("region")}
	if v := q.Get("index"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return opts, fmt.Errorf("index %q is invalid", v)
		}
		opts.MinQueryIndex = idx
	}
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			n, nerr := strconv.ParseUint(v, 10, 32)
			if nerr != nil {
				return opts, fmt.Errorf("wait %q is invalid", v)
			}
			d = time.Duration(n) * time.Second
		}
		opts.MaxQueryTime = d
	}
	if opts.MinQueryIndex > 0 && opts.MaxQueryTime == 0 {
		opts.MaxQueryTime = structs.DefaultBlockingWait
	}
	opts.MaxQueryTime = min(opts.MaxQueryTime, structs.MaxBlockingWait)
	return opts, nil
}

func (h *Handler) varRead(w http.ResponseWriter, r *http.Request, path string) {
	ns := h.namespace(r)
	if !structs.WorkloadMayReadVariable(h.Identity, ns, path) {
		h.refused(w, ns, path)
		return
	}
	opts, err := queryOptions(r, ns)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := rpcapi.VarGet.Call(r.Context(), h.RPC, &structs.VariablesReadRequest{Path: path, QueryOptions: opts})
	if err != nil {
		writeRPCErr(w, err)
		return
	}
	setQueryMeta(w, resp.QueryMeta)
	if resp.Data == nil {
		writeErr(w, http.StatusNotFound, "variable not found")
		return
	}
	v := resp.Data
	writeJSON(w, &api.Variable{
		Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime, Items: v.Items,
	})
}

func (h *Handler) varList(w http.ResponseWriter, r *http.Request) {
	ns := h.namespace(r)
	if ns != h.Identity.Namespace {
		h.refused(w, ns, r.URL.Query().Get("prefix"))
		return
	}
	opts, err := queryOptions(r, ns)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	// The whole list of the namespace under the prefix, filtered to what
	// the task may read: a page of it could hold nothing readable.
	opts.Prefix = r.URL.Query().Get("prefix")
	resp, err := rpcapi.VarList.Call(r.Context(), h.RPC, &structs.VariablesListRequest{QueryOptions: opts})
	if err != nil {
		writeRPCErr(w, err)
		return
	}
	setQueryMeta(w, resp.QueryMeta)
	out := []*api.VariableMetadata{}
	for _, m := range resp.Data {
		if !structs.WorkloadMayReadVariable(h.Identity, m.Namespace, m.Path) {
			continue
		}
		out = append(out, &api.VariableMetadata{
			Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
			CreateTime: m.CreateTime, ModifyTime: m.ModifyTime,
		})
	}
	writeJSON(w, out)
}

// services forwards a service read to the agent's HTTP API, in the task's
// namespace.
func (h *Handler) services(w http.ResponseWriter, r *http.Request) {
	if h.namespace(r) != h.Identity.Namespace {
		h.refused(w, h.namespace(r), r.URL.Path)
		return
	}
	target, err := url.Parse(h.ServicesURL)
	if h.ServicesURL == "" || err != nil {
		writeErr(w, http.StatusNotFound, "service discovery is not available on this agent")
		return
	}
	rp := &httputil.ReverseProxy{
		Transport: h.ServicesTransport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The task is served as itself: a token it sent goes no
			// further.
			pr.Out.Header.Del("X-Nomad-Token")
			pr.Out.Header.Del("Authorization")
			q := pr.Out.URL.Query()
			q.Set("namespace", h.Identity.Namespace)
			pr.Out.URL.RawQuery = q.Encode()
			pr.Out.Header.Del("X-Nomad-Token")
			pr.Out.Header.Del("Authorization")
			if h.ServicesToken != "" {
				pr.Out.Header.Set("X-Nomad-Token", h.ServicesToken)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeErr(w, http.StatusBadGateway, "read services from the agent: "+err.Error())
		},
	}
	rp.ServeHTTP(w, r)
}

func (h *Handler) refused(w http.ResponseWriter, ns, path string) {
	if h.Logger != nil {
		h.Logger.Warn("template read refused", "namespace", ns, "path", path)
	}
	writeErr(w, http.StatusForbidden, fmt.Sprintf(
		"Permission denied: a task's templates read the variables nomad/jobs/%s[/%s[/%s]] of namespace %q, not %q of namespace %q",
		h.Identity.JobID, h.Identity.Group, h.Identity.Task, h.Identity.Namespace, path, ns))
}

func setQueryMeta(w http.ResponseWriter, m structs.QueryMeta) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(max(m.Index, 1), 10))
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(m.KnownLeader))
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	http.Error(w, msg, code)
}

func writeRPCErr(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch structs.KindOf(err) {
	case structs.KindNotFound:
		code = http.StatusNotFound
	case structs.KindInvalid:
		code = http.StatusBadRequest
	case structs.KindPermission:
		code = http.StatusForbidden
	case structs.KindUnavailable:
		code = http.StatusServiceUnavailable
	}
	writeErr(w, code, err.Error())
}

// memListener is a net.Listener whose connections are made in memory by
// Dial: a task's templates reach their Handler through it, and nothing
// else can.
type memListener struct {
	conns     chan net.Conn
	closeOnce sync.Once
	closed    chan struct{}
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *memListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *memListener) Addr() net.Addr { return memAddr{} }

// Dial returns the client end of a new in-memory connection (the address
// is ignored: there is one server).
func (l *memListener) Dial(_, _ string) (net.Conn, error) {
	return l.DialContext(context.Background(), "", "")
}

// DialContext is Dial with a context.
func (l *memListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		client.Close()
		server.Close()
		return nil, errors.New("template data source closed")
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "drover-template" }
