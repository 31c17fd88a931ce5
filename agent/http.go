package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/server"
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
	// taskConfigs checks task config blocks for /v1/validate/job.
	taskConfigs server.TaskConfigValidator
	// forwarder proxies /v1/client requests for other nodes to their
	// agents (http_client_forward.go); nil serves every request here.
	forwarder *nodeForwarder

	ln  net.Listener
	srv *http.Server
	// stopRequests cancels the context of every in-flight request, so that
	// blocking queries return at shutdown instead of holding it up.
	stopRequests context.CancelFunc
	done         chan struct{} // closed when Serve returns
}

// newHTTPServer returns a server for ln; serve starts it.
func newHTTPServer(ln net.Listener, backend Backend, info agentInfo, parse jobParser, logger *slog.Logger) *httpServer {
	s := &httpServer{backend: backend, info: info, parse: parse, logger: logger, ln: ln, done: make(chan struct{}),
		forwarder: newNodeForwarder(logger), taskConfigs: TaskConfigSchemas()}
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
	if s.forwarder != nil {
		s.forwarder.close()
	}
	if err != nil {
		return fmt.Errorf("http server shutdown: %w", err)
	}
	return nil
}

// handler returns the API's router, behind the forwarding of client
// requests to other nodes' agents.
func (s *httpServer) handler() http.Handler {
	rt := &router{}
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }

	get("/v1/jobs", s.jobList)
	write("/v1/jobs", s.jobRegister)
	rt.handle("/v1/jobs/parse", s.wrap(s.jobsParse), http.MethodGet, http.MethodPut, http.MethodPost)
	write("/v1/validate/job", s.jobValidate) // http_validate.go
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
	s.registerUpdateRoutes(rt)  // http_updates.go
	s.registerClientRoutes(rt)  // http_client_ops.go
	s.registerStatsRoutes(rt)   // http_client_stats.go
	s.registerSnapshotRoute(rt) // http_snapshot.go

	// Client requests for other nodes go to their agents
	// (http_client_forward.go).
	return s.forwardClientRequests(rt)
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
