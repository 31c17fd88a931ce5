package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/logmonitor"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/ui"
)

// maxBodyBytes bounds a request body: 10 MB is far above any real job.
const maxBodyBytes = 10 << 20

// Agent is what the agent endpoints report about the agent that serves the
// API.
type Agent interface {
	// Self returns the body of GET /v1/agent/self.
	Self() *AgentSelf
	// Health returns the body of GET /v1/agent/health and whether all is
	// well.
	Health() (*AgentHealthResponse, bool)
	// Leader returns the leader's RPC address, "" when there is none.
	Leader() string
	// Peers returns the servers' RPC addresses.
	Peers() []string
	// Region returns the agent's region.
	Region() string
	// IsServer reports whether the agent runs a server.
	IsServer() bool
	// Contact reports whether a cluster leader is known, and how long ago
	// the agent last heard from it: every response carries them
	// (X-Nomad-KnownLeader, X-Nomad-LastContact); a read's own answer
	// overrides them.
	Contact() (knownLeader bool, lastContact time.Duration)
}

// JobParser turns a job file into a submitted job (jobspec.ParseRequest).
type JobParser func(*api.JobsParseRequest) (*api.Job, error)

// Config configures a Server.
type Config struct {
	// RPC calls the server's methods: the server in process, or the
	// servers over the RPC port (rpcclient) for a client-only agent.
	RPC rpcapi.Conn
	// Agent reports on the agent.
	Agent Agent
	// Client is the agent's node client, which the /v1/client endpoints
	// act on; nil when the agent runs none.
	Client NodeClient
	// ParseJob parses job files for /v1/jobs/parse.
	ParseJob JobParser
	// Logger logs requests at debug level; nil discards.
	Logger *slog.Logger
	// UI serves the web UI (package ui) at /ui/ beside the API, and
	// redirects / there (the agent's ui { enabled }).
	UI bool
	// Monitor streams the agent's logs to GET /v1/agent/monitor (the
	// agent logs through Monitor.Handler); nil: the endpoint answers 501.
	Monitor *logmonitor.Monitor
	// EnableDebug serves the profiling endpoints /v1/agent/pprof/* (the
	// agent's enable_debug).
	EnableDebug bool
	// Metrics is the agent's telemetry, served at /v1/metrics (metrics.go);
	// nil answers 404 there.
	Metrics Metrics
	// Events is the server's event stream, served at /v1/event/stream
	// (events.go); nil (an agent without a server) answers 503 there.
	Events EventStream
	// ForwardTLS, when set, is the TLS config of the requests this agent
	// forwards to other nodes' agents, which then serve HTTPS (the
	// agent's tls.http); nil forwards over plain HTTP.
	ForwardTLS *tls.Config
	// ACL resolves request tokens when ACLs are enabled (acl_authz.go);
	// nil: ACLs are disabled and every request is served.
	ACL ACLResolver
	// NodeToken returns the node's secret ID on a client-only agent, nil
	// elsewhere. A task's service read that the servers authorized (its
	// workload identity, workload_identity.go) is forwarded with it: the
	// servers refuse an anonymous read when ACLs are enabled, and the
	// task's own token is not an ACL token.
	NodeToken func() string
}

// endpoint handles one request. It returns the value to encode as JSON, or
// an error that writeError turns into a status code; it sets its own
// headers (X-Nomad-Index, ...) on w before returning.
type endpoint func(w http.ResponseWriter, req *http.Request) (any, error)

// Server serves the HTTP API on a listener.
type Server struct {
	rpc       rpcapi.Conn
	agent     Agent
	client    NodeClient  // nil: no client
	telemetry Metrics     // nil: no /v1/metrics
	events    EventStream // nil: no /v1/event/stream
	parse     JobParser
	logger    *slog.Logger
	// forwarder proxies /v1/client requests for other nodes to their
	// agents (client_forward.go).
	forwarder *nodeForwarder
	// execTimes bounds exec sessions' writes and silences (exec.go).
	execTimes execTimeouts
	// monitor and debug serve the agent's logs and profiles
	// (monitor.go, pprof.go); monitorSet tunes the log streams.
	monitor    *logmonitor.Monitor
	debug      bool
	monitorSet monitorSettings

	// acl checks requests' tokens (nil: ACLs disabled); lookups limits
	// failed token lookups per remote address.
	acl     ACLResolver
	lookups *lookupLimiter
	// nodeToken: see Config.NodeToken.
	nodeToken func() string

	ln  net.Listener
	srv *http.Server
	// stopRequests cancels the context of every in-flight request, so that
	// blocking queries return at shutdown instead of holding it up.
	stopRequests context.CancelFunc
	done         chan struct{} // closed when Serve returns
}

// New returns a server of the API on ln (nil: Handler only); Serve starts
// it and Shutdown stops it.
func New(ln net.Listener, cfg *Config) *Server {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{rpc: cfg.RPC, agent: cfg.Agent, client: cfg.Client, telemetry: cfg.Metrics, events: cfg.Events, parse: cfg.ParseJob, logger: logger, ln: ln,
		done: make(chan struct{}), forwarder: newNodeForwarder(logger, cfg.ForwardTLS), execTimes: defaultExecTimeouts(),
		monitor: cfg.Monitor, debug: cfg.EnableDebug, monitorSet: defaultMonitorSettings(),
		acl: cfg.ACL, lookups: newLookupLimiter(time.Now), nodeToken: cfg.NodeToken}
	base, cancel := context.WithCancel(context.Background())
	s.stopRequests = cancel
	s.srv = &http.Server{
		Handler:           ui.Mount(s.Handler(), cfg.UI),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	return s
}

// Serve serves requests in a goroutine until Shutdown.
func (s *Server) Serve() {
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("http server stopped", "error", err)
		}
	}()
}

// Shutdown ends in-flight requests (blocking queries return at once), stops
// accepting new ones and waits for the serving goroutine.
func (s *Server) Shutdown(ctx context.Context) error {
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
	s.forwarder.close()
	if err != nil {
		return fmt.Errorf("http server shutdown: %w", err)
	}
	return nil
}

// Handler returns the API's router; the /v1/client routes forward requests
// for other nodes to their agents (client_forward.go).
func (s *Server) Handler() http.Handler {
	return s.workloadGate(s.routes()) // workload_identity.go
}

// routes returns the router with every route registered.
func (s *Server) routes() *router {
	rt := newRouter(s.forwardClientRequests, s.authorizeRoute)
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }

	get("/v1/jobs", s.jobList)
	write("/v1/jobs", s.jobRegister)
	rt.handle("/v1/jobs/parse", s.wrap(s.jobsParse), http.MethodGet, http.MethodPut, http.MethodPost)
	write("/v1/validate/job", s.jobValidate) // validate.go
	get("/v1/job/{id}", s.jobGet)
	write("/v1/job/{id}", s.jobRegister)
	rt.handle("/v1/job/{id}", s.wrap(s.jobDeregister), http.MethodDelete)
	write("/v1/job/{id}/evaluate", s.jobEvaluate)
	get("/v1/job/{id}/allocations", s.jobAllocations)
	get("/v1/job/{id}/evaluations", s.jobEvaluations)
	get("/v1/job/{id}/summary", s.jobSummary)
	get("/v1/job/{id}/versions", s.jobVersions)
	get("/v1/job/{id}/deployment", s.jobDeployment)
	get("/v1/job/{id}/deployments", s.jobDeployments)

	get("/v1/allocations", s.allocList)
	get("/v1/allocation/{id}", s.allocGet)
	get("/v1/evaluations", s.evalList)
	get("/v1/evaluation/{id}", s.evalGet)
	get("/v1/evaluation/{id}/allocations", s.evalAllocations)
	get("/v1/nodes", s.nodeList)
	get("/v1/node/{id}", s.nodeGet)
	get("/v1/node/{id}/allocations", s.nodeAllocations)

	get("/v1/status/leader", s.statusLeader)
	get("/v1/status/peers", s.statusPeers)
	get("/v1/regions", s.regions)
	get("/v1/agent/self", s.agentSelf)
	get("/v1/agent/health", s.agentHealth)
	get("/v1/agent/schedulers", s.agentSchedulers)
	get("/v1/agent/schedulers/config", s.agentSchedulerConfig)      // agent_schedulers.go
	write("/v1/agent/schedulers/config", s.agentSetSchedulerConfig) // agent_schedulers.go
	s.registerUpdateRoutes(rt)                                      // updates.go
	s.registerPeriodicRoutes(rt)                                    // periodic.go
	s.registerClientRoutes(rt)                                      // client_ops.go
	s.registerStatsRoutes(rt)                                       // client_stats.go
	s.registerNodeMetaRoutes(rt)                                    // node_meta.go

	s.registerNodeIdentityRoutes(rt)  // node_identity.go
	s.registerCSIVolumeRoutes(rt)     // csi_volumes.go
	s.registerSnapshotRoute(rt)       // snapshot.go
	s.registerVariableRoutes(rt)      // vars.go
	s.registerObservabilityRoutes(rt) // observability_routes.go
	s.registerTimelineRoutes(rt)      // timeline.go
	s.registerClusterRoutes(rt)       // operator_cluster.go
	s.registerGossipKeyringRoutes(rt) // gossip_keyring.go
	s.registerServiceRoutes(rt)       // services.go
	s.registerMetricsRoute(rt)        // metrics.go
	s.registerEventRoute(rt)          // events.go
	s.registerNamespaceRoutes(rt)     // namespaces.go
	s.registerScalingRoutes(rt)       // scaling.go
	s.registerNodeOpRoutes(rt)        // nodes_drain.go
	s.registerNodeOpsRoutes(rt)       // node_ops.go
	s.registerJobSubmissionRoute(rt)  // job_submission.go
	s.registerSearchRoutes(rt)        // search.go
	s.registerEvalDeleteRoute(rt)     // eval_delete.go
	s.registerNodePoolRoutes(rt)      // node_pools.go
	s.registerACLRoutes(rt)           // acl.go
	s.registerACLAuthRoutes(rt)       // acl_auth.go
	return rt
}

// wrap adapts an endpoint to http.Handler: it bounds the body, and writes
// the result as JSON or the error as plain text.
func (s *Server) wrap(e endpoint) http.Handler { return s.wrapLimit(e, maxBodyBytes) }

// wrapLimit is wrap with a body limit of its own.
func (s *Server) wrapLimit(e endpoint, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		req.Body = http.MaxBytesReader(w, req.Body, limit)
		known, last := s.agent.Contact()
		setLeaderHeaders(w, known, last)
		out, err := e(w, req)
		if err == nil {
			out, err = filterByGrant(req.Context(), out) // acl_authz.go
		}
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
	setLeaderHeaders(w, m.KnownLeader, m.LastContact)
	if m.NextToken != "" {
		w.Header().Set("X-Nomad-NextToken", m.NextToken)
	}
}

// setLeaderHeaders sets X-Nomad-KnownLeader and X-Nomad-LastContact (in
// milliseconds).
func setLeaderHeaders(w http.ResponseWriter, known bool, last time.Duration) {
	w.Header().Set("X-Nomad-KnownLeader", strconv.FormatBool(known))
	w.Header().Set("X-Nomad-LastContact", strconv.FormatInt(last.Milliseconds(), 10))
}

// setIndex sets X-Nomad-Index: the index of the data, 0 for data never
// written, as Nomad answers (a client that blocks on 0 does not block: it
// should wait on 1 or more, on which the server blocks until a write).
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
}
