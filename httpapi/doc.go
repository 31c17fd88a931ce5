// Package httpapi is drover's HTTP API (Nomad-compatible, port 4646): its
// routes, handlers, request parsing, and the conversion between the api
// package's wire types and the structs domain types.
//
// Where it sits in the data flow: a job arrives as JSON on the API, is
// decoded into an api.Job, converted into a structs.Job (convert*.go) and
// handed to the server with one call of a method rpcapi declares
// (JobRegister), through the rpcapi.Conn the agent gives (the server in
// process, or rpcclient to the servers for a client-only agent). Every
// handler makes one server call: reads that compose several lookups (a job
// by prefix, a job's summary, an evaluation's or a node's allocations) are
// server methods. Reads are the server's blocking queries, rendered in
// Nomad's JSON shapes.
//
// Files: server.go holds the Server (Config, New, Serve, Shutdown), its
// routes and the writing of responses; request.go the reading of bodies
// and query parameters; router.go the routing; errors.go the one mapping
// from errors to status codes; acl_routes.go what each route requires
// with ACLs enabled, acl_authz.go the check of it before the handler (the
// request's token, X-Nomad-Token or Authorization: Bearer, resolved by
// Config.ACL); the other files the handlers, by resource. The agent
// (package agent) wires it; this package never imports the server.
//
// Endpoints (JSON as Nomad's; errors are plain text with the status code).
// Reads of jobs, allocations, evaluations, deployments and variables take
// ?namespace= ("default" when absent; "*" lists every namespace):
//
//	GET      /v1/jobs                        []JobListStub (?prefix, ?namespace)
//	PUT|POST /v1/jobs                        {"Job": {...}} -> JobRegisterResponse
//	GET|PUT|POST /v1/jobs/parse              JobsParseRequest -> Job
//	PUT|POST /v1/validate/job                {"Job": {...}} -> JobValidateResponse (problems listed, nothing stored)
//	GET      /v1/job/:id                     Job (ID or unique prefix)
//	PUT|POST /v1/job/:id                     register; the body's job ID must be :id
//	DELETE   /v1/job/:id[?purge=true]        JobDeregisterResponse
//	PUT|POST /v1/job/:id/evaluate            a new evaluation of the job -> JobRegisterResponse
//	PUT|POST /v1/job/:id/periodic/force      launch a periodic job's child now -> PeriodicForceResponse
//	PUT|POST /v1/job/:id/dispatch            {"Payload", "Meta", "IdPrefixTemplate"} -> JobDispatchResponse
//	GET      /v1/job/:id/allocations[?all]   []AllocListStub
//	GET      /v1/job/:id/evaluations         []Evaluation
//	GET      /v1/job/:id/summary             JobSummary
//	GET      /v1/job/:id/versions[?diffs]    {"Versions": [Job], "Diffs": [...]} (newest first)
//	GET      /v1/job/:id/submission?version=N  the version's source: {"Source", "Format", "VariableFlags", "Variables"}
//	PUT|POST /v1/job/:id/plan                {"Job", "Diff"} -> JobPlanResponse (nothing committed)
//	PUT|POST /v1/job/:id/revert              {"JobID", "JobVersion", "EnforcePriorVersion"} -> JobRegisterResponse
//	GET      /v1/job/:id/deployment          the latest Deployment, or null
//	GET      /v1/job/:id/deployments         []Deployment (newest first)
//	GET      /v1/deployments[?prefix]        []Deployment (newest first)
//	GET      /v1/deployment/:id              Deployment (ID or unique prefix)
//	GET      /v1/deployment/allocations/:id  []AllocListStub of the allocations it placed
//	PUT|POST /v1/deployment/fail/:id         fail it (auto_revert applies) -> DeploymentUpdateResponse
//	PUT|POST /v1/deployment/pause/:id        {"Pause": true|false}: pause or resume -> DeploymentUpdateResponse
//	GET      /v1/operator/scheduler/configuration  {"SchedulerConfig", "Index"}
//	PUT|POST /v1/operator/scheduler/configuration[?cas=N]  SchedulerConfiguration -> {"Updated", "Index"}
//	GET      /v1/namespaces[?prefix]         []Namespace (by name, "default" included)
//	GET      /v1/namespace/:name             Namespace (404 when there is none)
//	PUT|POST /v1/namespace[/:name]           Namespace: create or replace it
//	DELETE   /v1/namespace/:name             refused for "default", and while it has live jobs or variables
//	GET      /v1/allocations                 []AllocListStub
//	GET      /v1/allocation/:id              Allocation (ID or unique prefix)
//	GET      /v1/evaluations                 []Evaluation
//	DELETE   /v1/evaluations                 {"EvalIDs"} or {"Filter"}: delete them while the eval broker is paused -> {"Count"}
//	GET      /v1/evaluation/:id              Evaluation (ID or unique prefix)
//	GET      /v1/evaluation/:id/allocations  []AllocListStub
//	PUT|POST /v1/search                      {"Prefix", "Context"} -> {"Matches": {ctx: [ID]}, "Truncations"}
//	PUT|POST /v1/search/fuzzy                {"Text", "Context"} -> {"Matches": {ctx: [{"ID", "Scope"}]}, "Truncations"}
//	GET      /v1/nodes                       []NodeListStub
//	GET      /v1/node/:id                    Node (ID or unique prefix)
//	GET      /v1/node/:id/allocations        []Allocation
//	GET      /v1/status/leader               "127.0.0.1:4647"
//	GET      /v1/status/peers                ["127.0.0.1:4647"]
//	GET      /v1/regions                     ["global"]
//	GET      /v1/agent/self                  {"config", "member", "stats"}
//	GET      /v1/agent/health                {"client": {"ok"}, "server": {"ok"}}
//	GET      /v1/agent/schedulers            the server's scheduler workers (SchedulerWorkersInfo)
//	GET      /v1/agent/schedulers/config     {"server_id", "num_schedulers", "enabled_schedulers"}
//	PUT|POST /v1/agent/schedulers/config     {"num_schedulers", "enabled_schedulers"}: resize the workers now
//	GET      /v1/agent/members               the gossip pool (operator_cluster.go)
//	GET      /v1/agent/monitor               ?log_level&log_json&log_include_location&plain&node_id: the agent's
//	                                         log lines from now on, as StreamFrame JSON objects {"Data"} (raw with plain)
//	GET      /v1/agent/pprof/:profile        cmdline, profile|trace?seconds, goroutine|heap|...?debug&gc&node_id
//	                                         &server_id (agent:write with ACLs; without, enable_debug or 403)
//	PUT|POST /v1/allocation/:id/stop         {"EvalID", "Index"}: stop it; an eval places a replacement
//	PUT|POST /v1/client/allocation/:id/restart  {"TaskName", "AllTasks"} -> {"Index"}
//	PUT|POST /v1/client/allocation/:id/signal   {"Signal" (default SIGKILL), "Task"} -> {"Index"}
//	GET|PUT  /v1/client/allocation/:id/gc    collect one terminal allocation
//	GET      /v1/client/allocation/:id/exec  ?task&command=["sh"]&tty&tty_height&tty_width: a WebSocket carrying
//	                                         Nomad's exec frames (stdin, tty_size in; stdout, stderr, exited out);
//	                                         a malformed query is an HTTP 400, every other refusal (unknown
//	                                         allocation or task) a close frame 4000+status after the upgrade
//	GET      /v1/client/allocation/:id/stats AllocResourceUsage (per task and summed)
//	GET      /v1/client/allocation/:id/timeline  AllocTimeline: when each step of its way to running was reached (drover)
//	GET      /v1/client/allocation/:id/snapshot  tar.gz of the allocation's data (for a migrating replacement)
//	GET      /v1/client/stats                HostStats (CPU, memory, alloc dir disk, uptime, devices)
//	GET      /v1/client/identity[?node_id]   {"Claims": {...}} of the node's identity (node_identity.go)
//	PUT|POST /v1/client/identity/renew       the node renews its identity on its next heartbeat
//	GET      /v1/volumes?type=csi            [] (drover has no CSI volumes; csi_volumes.go)
//	GET      /v1/client/fs/logs/:id          ?task&type=stdout|stderr&follow&offset&origin=start|end&plain:
//	                                         StreamFrame JSON objects {"File","Offset","Data"} (raw bytes with plain)
//	GET      /v1/client/fs/ls/:id?path=      []AllocFileInfo
//	GET      /v1/client/fs/stat/:id?path=    AllocFileInfo
//	GET      /v1/client/fs/cat/:id?path=     the file's bytes
//	GET      /v1/client/fs/readat/:id?path=&offset=&limit=  limit bytes from offset (0: to the end)
//	GET|PUT  /v1/client/gc[?node_id]         collect every terminal allocation now -> {"Collected": [IDs]}
//	PUT|POST /v1/system/gc                   the servers' garbage collection now, then /v1/client/gc on this agent
//	PUT|POST /v1/system/reconcile/summaries  recompute every job's summary
//	PUT|POST /v1/node/:id/drain              start or stop a node's drain
//	PUT|POST /v1/node/:id/eligibility        make a node eligible or ineligible
//	PUT|POST /v1/node/:id/evaluate           evaluations of the jobs the node affects
//	PUT|POST /v1/node/:id/purge              remove a node; its allocations are lost and replaced
//	GET      /ui/...                         the web UI (package ui) when Config.UI; GET / redirects there
//
// The /v1/client endpoints act on this agent's client (client_ops.go,
// fs.go, logs.go, client_stats.go, snapshot.go). A request for an
// allocation (or ?node_id) of another node is proxied to that node's agent,
// found through the servers (client_forward.go): the answer streams back
// with its status; an unreachable node is a 502 (504 on a timeout) naming
// it. The proxied
// request carries X-Drover-Forwarded-By and is never forwarded again: an
// agent that gets one for an allocation it does not run answers 400. File
// paths are confined to the allocation directory: ".." out of it, or a
// symlink pointing outside it, is a 403.
//
// The handlers call the server through an rpcapi.Conn, with rpcapi's
// declared methods: the server in process, or for a client-only agent the
// client's rpcclient over the servers' RPC port (failover, error kinds,
// retries of what is safe to repeat, blocking queries timed by their wait
// and cancelled with the HTTP request); the headers of a read are the
// server's QueryMeta. A client-only agent's /v1/status/leader and peers
// answer from its servers list.
//
// Every read takes ?index=N&wait=D (a blocking query: it returns once the
// data's index exceeds N, or after D, at most 10 minutes) and ?pretty, and
// answers with X-Nomad-Index, X-Nomad-KnownLeader and X-Nomad-LastContact;
// writes answer with X-Nomad-Index.
package httpapi
