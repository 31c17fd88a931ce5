package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// maxBodyBytes bounds a request body: 10 MB is far above any real job.
const maxBodyBytes = 10 << 20

// Backend is what the HTTP API needs from a server: its RPC methods (reads
// are blocking queries). *server.Server implements it.
type Backend interface {
	JobRegister(context.Context, *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error)
	JobDeregister(context.Context, *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error)
	JobGet(context.Context, *structs.JobSpecificRequest) (*structs.SingleJobResponse, error)
	JobList(context.Context, *structs.JobListRequest) (*structs.JobListResponse, error)
	JobAllocations(context.Context, *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error)
	JobEvaluations(context.Context, *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error)
	AllocList(context.Context, *structs.AllocListRequest) (*structs.AllocListResponse, error)
	AllocGet(context.Context, *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error)
	EvalList(context.Context, *structs.EvalListRequest) (*structs.EvalListResponse, error)
	EvalGet(context.Context, *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error)
	NodeList(context.Context, *structs.NodeListRequest) (*structs.NodeListResponse, error)
	NodeGet(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error)
}

// agentInfo is what the agent endpoints report about the agent itself.
type agentInfo interface {
	// self returns the body of GET /v1/agent/self.
	self() *agentSelf
	// health returns the body of GET /v1/agent/health and whether all is well.
	health() (*agentHealthResponse, bool)
	// leader returns the leader's RPC address, "" when there is none.
	leader() string
	// peers returns the servers' RPC addresses.
	peers() []string
	// region returns the agent's region.
	region() string
}

// jobParser turns a job file into a submitted job (jobspec.ParseRequest).
type jobParser func(*api.JobsParseRequest) (*api.Job, error)

// endpoint handles one request. It returns the value to encode as JSON, or
// an error that writeError turns into a status code; it sets its own
// headers (X-Nomad-Index, ...) on w before returning.
type endpoint func(w http.ResponseWriter, req *http.Request) (any, error)

// httpServer serves the HTTP API on a listener.
type httpServer struct {
	backend Backend
	info    agentInfo
	parse   jobParser
	logger  *slog.Logger

	ln  net.Listener
	srv *http.Server
	// stopRequests cancels the context of every in-flight request, so that
	// blocking queries return at shutdown instead of holding it up.
	stopRequests context.CancelFunc
	done         chan struct{} // closed when Serve returns
}

// newHTTPServer returns a server for ln; serve starts it.
func newHTTPServer(ln net.Listener, backend Backend, info agentInfo, parse jobParser, logger *slog.Logger) *httpServer {
	s := &httpServer{backend: backend, info: info, parse: parse, logger: logger, ln: ln, done: make(chan struct{})}
	base, cancel := context.WithCancel(context.Background())
	s.stopRequests = cancel
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	return s
}

// serve serves requests in a goroutine until shutdown.
func (s *httpServer) serve() {
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("http server stopped", "error", err)
		}
	}()
}

// shutdown ends in-flight requests (blocking queries return at once), stops
// accepting new ones and waits for the serving goroutine.
func (s *httpServer) shutdown(ctx context.Context) error {
	s.stopRequests()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return fmt.Errorf("http server: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("http server shutdown: %w", err)
	}
	return nil
}

// handler returns the API's router.
func (s *httpServer) handler() http.Handler {
	rt := &router{}
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }

	get("/v1/jobs", s.jobList)
	write("/v1/jobs", s.jobRegister)
	rt.handle("/v1/jobs/parse", s.wrap(s.jobsParse), http.MethodGet, http.MethodPut, http.MethodPost)
	get("/v1/job/:id", s.jobGet)
	write("/v1/job/:id", s.jobRegister)
	rt.handle("/v1/job/:id", s.wrap(s.jobDeregister), http.MethodDelete)
	get("/v1/job/:id/allocations", s.jobAllocations)
	get("/v1/job/:id/evaluations", s.jobEvaluations)
	get("/v1/job/:id/summary", s.jobSummary)
	get("/v1/job/:id/versions", s.jobVersions)
	get("/v1/job/:id/deployment", s.jobDeployment)
	get("/v1/job/:id/deployments", s.jobDeployments)

	get("/v1/allocations", s.allocList)
	get("/v1/allocation/:id", s.allocGet)
	get("/v1/evaluations", s.evalList)
	get("/v1/evaluation/:id", s.evalGet)
	get("/v1/evaluation/:id/allocations", s.evalAllocations)
	get("/v1/nodes", s.nodeList)
	get("/v1/node/:id", s.nodeGet)
	get("/v1/node/:id/allocations", s.nodeAllocations)

	get("/v1/status/leader", s.statusLeader)
	get("/v1/status/peers", s.statusPeers)
	get("/v1/regions", s.regions)
	get("/v1/agent/self", s.agentSelf)
	get("/v1/agent/health", s.agentHealth)
	return rt
}

// wrap adapts an endpoint to http.Handler: it bounds the body, and writes
// the result as JSON or the error as plain text.
func (s *httpServer) wrap(e endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		req.Body = http.MaxBytesReader(w, req.Body, maxBodyBytes)
		out, err := e(w, req)
		if err != nil {
			s.logger.Debug("http request failed", "method", req.Method, "path", req.URL.Path,
				"code", statusCode(err), "error", err, "duration", time.Since(start))
			writeError(w, req, err)
			return
		}
		writeJSON(w, req, out)
		s.logger.Debug("http request", "method", req.Method, "path", req.URL.Path, "duration", time.Since(start))
	})
}

// writeJSON encodes v, indented when the request has ?pretty.
func writeJSON(w http.ResponseWriter, req *http.Request, v any) {
	var (
		b   []byte
		err error
	)
	if isPretty(req) {
		b, err = json.MarshalIndent(v, "", "    ")
		b = append(b, '\n')
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		writeError(w, req, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func isPretty(req *http.Request) bool {
	v, ok := req.URL.Query()["pretty"]
	if !ok {
		return false
	}
	if len(v) == 0 || v[0] == "" {
		return true
	}
	p, err := strconv.ParseBool(v[0])
	return err != nil || p
}

// decodeBody decodes the JSON request body into out. Unknown fields (named
// with their path, such as Job.TaskGroups[0].Cuont), a missing body and
// trailing data are errors that name the problem.
func decodeBody(req *http.Request, out any) error {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return err // *http.MaxBytesError when too large
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			return structs.Invalid("request body is empty: send a JSON object")
		case errors.As(err, &se):
			return structs.Invalid("request body is not valid JSON: %v (at byte %d)", err, se.Offset)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			if path := unknownField(body, reflect.TypeOf(out)); path != "" {
				return structs.Invalid("request body: unknown field %s: check its spelling and case", path)
			}
			return structs.Invalid("request body: %v", err)
		default:
			return structs.Invalid("request body: %v", err)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return structs.Invalid("request body has data after the JSON object")
	}
	return nil
}

// unknownField returns the path of the first field of the JSON document
// that type t does not have ("Job.TaskGroups[0].Cuont"), or "".
func unknownField(doc []byte, t reflect.Type) string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return ""
	}
	return findUnknown(v, t, "")
}

func findUnknown(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			if t == reflect.TypeFor[json.RawMessage]() {
				return ""
			}
			for _, key := range sortedKeys(x) {
				f, ok := jsonField(t, key)
				name := key
				if path != "" {
					name = path + "." + key
				}
				if !ok {
					return name
				}
				if p := findUnknown(x[key], f.Type, name); p != "" {
					return p
				}
			}
		case reflect.Map:
			for _, key := range sortedKeys(x) {
				if p := findUnknown(x[key], t.Elem(), fmt.Sprintf("%s[%q]", path, key)); p != "" {
					return p
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				if p := findUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// jsonField finds the struct field that encoding/json decodes key into:
// an exact name match, else a case-insensitive one.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// queryOptions reads the common read parameters: namespace ("default"
// unless given; "*" is all), prefix, region, stale and the blocking-query
// pair index and wait.
func queryOptions(req *http.Request) (structs.QueryOptions, error) {
	q := req.URL.Query()
	opts := structs.QueryOptions{
		Region:    q.Get("region"),
		Namespace: namespaceParam(req),
		Prefix:    q.Get("prefix"),
	}
	if _, ok := q["stale"]; ok {
		opts.AllowStale = true
	}
	if v := q.Get("index"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return opts, structs.Invalid("index %q is invalid: use a non-negative integer", v)
		}
		opts.MinQueryIndex = idx
	}
	if v := q.Get("wait"); v != "" {
		d, err := parseWait(v)
		if err != nil {
			return opts, err
		}
		opts.MaxQueryTime = d
	}
	if opts.MinQueryIndex > 0 && opts.MaxQueryTime == 0 {
		opts.MaxQueryTime = structs.DefaultBlockingWait
	}
	opts.MaxQueryTime = min(opts.MaxQueryTime, structs.MaxBlockingWait)
	return opts, nil
}

// parseWait parses a blocking query's wait: a Go duration ("5s", "5000ms",
// as Nomad's clients send) or a bare number of seconds.
func parseWait(v string) (time.Duration, error) {
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, structs.Invalid("wait %q is invalid: use a duration such as 5s or 5000ms", v)
	}
	return d, nil
}

// namespaceParam returns ?namespace, or the default namespace.
func namespaceParam(req *http.Request) string {
	if ns := req.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return structs.DefaultNamespace
}

// boolParam reads an optional boolean query parameter.
func boolParam(req *http.Request, name string) (bool, error) {
	v, ok := req.URL.Query()[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return ok, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, structs.Invalid("%s=%q is invalid: use true or false", name, v[0])
	}
	return b, nil
}

// setQueryMeta sets the headers of a read.
func setQueryMeta(w http.ResponseWriter, m structs.QueryMeta) {
	setIndex(w, m.Index)
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(m.KnownLeader))
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
}

// setIndex sets X-Nomad-Index. An index is never reported as 0: a client
// that blocks on index 0 would not block at all.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(max(index, 1), 10))
}
