package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// NodeClient is what the client endpoints (/v1/client/...) need from the
// agent's node client; *client.Client implements it.
type NodeClient interface {
	NodeID() string
	AllocDir(allocID string) (string, error)
	RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error
	SignalAlloc(ctx context.Context, allocID, task, signal string) error
	CollectAllGarbage(ctx context.Context) ([]string, error)
	CollectAlloc(ctx context.Context, allocID string) error
	// SnapshotAlloc streams an allocation's migratable data as a tar.gz.
	SnapshotAlloc(allocID string, w io.Writer) error
	// AllocTaskStats returns the latest resource usage sample of each task
	// of the allocation, by task name (nil: none).
	AllocTaskStats(allocID string) (map[string]*drivers.TaskResourceUsage, error)
	// HostStats samples the host; parts it could not read are nil.
	HostStats() (*stats.HostStats, error)
	// TaskDeviceStats returns the statistics of the device instances the
	// allocation gave each task, by task.
	TaskDeviceStats(alloc *structs.Allocation) map[string][]*device.DeviceGroupStats
	// HostDeviceStats returns the statistics of every device of the node.
	HostDeviceStats() []*device.DeviceGroupStats
	// AllocTimeline returns the node's part of an allocation's timeline
	// (nil: nothing recorded).
	AllocTimeline(allocID string) []structs.TimelineEntry
	// AllocChecks returns the latest results of an allocation's service
	// checks, by check ID.
	AllocChecks(allocID string) (map[string]*structs.CheckQueryResult, error)
	// NodeMeta returns the node's merged, dynamic and static metadata.
	NodeMeta() *structs.NodeMeta
	// ApplyNodeMeta changes the node's dynamic metadata (nil unsets a
	// key) and returns the node's metadata after the change; invalid
	// keys are a structs.Invalid error.
	ApplyNodeMeta(changes map[string]*string) (*structs.NodeMeta, error)

	// NodeIdentityClaims returns the claims of the node's identity,
	// waiting a little for the first one after it registers.
	NodeIdentityClaims(ctx context.Context) (map[string]any, error)
	// RenewNodeIdentity has the node renew its identity on its next
	// heartbeat.
	RenewNodeIdentity()
}

// defaultSignal is sent when a signal request names none, as Nomad does.
const defaultSignal = "SIGKILL"

// registerClientRoutes adds the endpoints that act on the allocations of
// this agent's client: lifecycle operations, logs, files and GC.
func (s *Server) registerClientRoutes(rt *router) {
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }

	write("/v1/client/allocation/{id}/restart", s.clientAllocRestart)
	write("/v1/client/allocation/{id}/signal", s.clientAllocSignal)
	get("/v1/client/allocation/{id}/checks", s.clientAllocChecks) // services.go
	rt.handle("/v1/client/allocation/{id}/gc", s.wrap(s.clientAllocGC), http.MethodGet, http.MethodPut, http.MethodPost)
	write("/v1/allocation/{id}/stop", s.allocStop)
	rt.handle("/v1/client/gc", s.wrap(s.clientGC), http.MethodGet, http.MethodPut, http.MethodPost)

	get("/v1/client/fs/ls/{id}", s.fsList)
	get("/v1/client/fs/stat/{id}", s.fsStat)
	rt.handle("/v1/client/fs/cat/{id}", http.HandlerFunc(s.fsCat), http.MethodGet)
	rt.handle("/v1/client/fs/readat/{id}", http.HandlerFunc(s.fsReadAt), http.MethodGet)
	rt.handle("/v1/client/fs/logs/{id}", http.HandlerFunc(s.fsLogs), http.MethodGet)
}

// localClient returns the agent's client, or an error saying there is none.
func (s *Server) localClient() (NodeClient, error) {
	if s.client != nil {
		return s.client, nil
	}
	return nil, newHTTPError(http.StatusBadRequest,
		"this agent runs no client: send client requests to the agent of the node that runs the allocation")
}

// localAlloc resolves the allocation named by the :id path parameter (an ID
// or a unique prefix) on the servers (or takes the one the forwarding step
// resolved) and checks that this agent's client runs it. A request for an
// allocation of another node reaches this only when another agent
// forwarded it here (a request is forwarded once at most).
func (s *Server) localAlloc(req *http.Request) (*structs.Allocation, NodeClient, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, nil, err
	}
	alloc, _ := req.Context().Value(resolvedAllocKey{}).(*structs.Allocation)
	if alloc == nil {
		id := req.PathValue("id")
		resp, err := rpcapi.AllocGet.Call(req.Context(), s.rpc, &structs.AllocSpecificRequest{
			AllocID:      id,
			QueryOptions: structs.QueryOptions{Namespace: namespaceParam(req), Region: req.URL.Query().Get("region")},
		})
		if err != nil {
			return nil, nil, err
		}
		if resp.Alloc == nil {
			return nil, nil, structs.NotFound("allocation", id)
		}
		alloc = resp.Alloc
	}
	if node := nc.NodeID(); alloc.NodeID != node {
		return nil, nil, newHTTPError(http.StatusBadRequest,
			"allocation %s runs on node %s, not on this agent's node %s: send the request to the agent of node %s "+
				"(or to any agent that is not itself forwarding it)", alloc.ID, shortNodeID(alloc.NodeID), shortNodeID(node), shortNodeID(alloc.NodeID))
	}
	return alloc, nc, nil
}

func shortNodeID(id string) string {
	if id == "" {
		return "(none)"
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// decodeOptionalBody decodes a JSON body into out; an empty body leaves out
// as it is.
func decodeOptionalBody(req *http.Request, out any) error {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return decodeBody(req, out)
}

// allocRestartRequest is the body of PUT /v1/client/allocation/:id/restart.
type allocRestartRequest struct {
	TaskName string
	AllTasks bool
}

// allocSignalRequest is the body of PUT /v1/client/allocation/:id/signal.
type allocSignalRequest struct {
	Task   string
	Signal string
}

// genericResponse is the body of client writes that return nothing else.
type genericResponse struct {
	Index uint64
}

// clientAllocRestart is PUT /v1/client/allocation/:id/restart: restart one
// task (TaskName), every task in lifecycle order (AllTasks), or the running
// tasks (neither); both at once is a 400.
func (s *Server) clientAllocRestart(_ http.ResponseWriter, req *http.Request) (any, error) {
	var body allocRestartRequest
	if err := decodeOptionalBody(req, &body); err != nil {
		return nil, err
	}
	if body.AllTasks && body.TaskName != "" {
		return nil, structs.Invalid("restart: set TaskName or AllTasks, not both")
	}
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	if body.TaskName != "" && !allocHasTask(alloc, body.TaskName) {
		return nil, structs.NotFound("task", body.TaskName)
	}
	if err := nc.RestartAlloc(req.Context(), alloc.ID, body.TaskName, body.AllTasks); err != nil {
		return nil, err
	}
	return genericResponse{}, nil
}

// clientAllocSignal is PUT /v1/client/allocation/:id/signal: signal one
// task, or every running task (no Task). A driver's failure is a 500 with
// its message; the task records a Signaling event either way.
func (s *Server) clientAllocSignal(_ http.ResponseWriter, req *http.Request) (any, error) {
	var body allocSignalRequest
	if err := decodeOptionalBody(req, &body); err != nil {
		return nil, err
	}
	sig := strings.ToUpper(strings.TrimSpace(body.Signal))
	if sig == "" {
		sig = defaultSignal
	}
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	if body.Task != "" && !allocHasTask(alloc, body.Task) {
		return nil, structs.NotFound("task", body.Task)
	}
	if err := nc.SignalAlloc(req.Context(), alloc.ID, body.Task, sig); err != nil {
		return nil, err
	}
	return genericResponse{}, nil
}

// allocStop is PUT /v1/allocation/:id/stop (an ID or a unique prefix): the
// servers stop the allocation and evaluate its job, placing a replacement;
// ?reschedule and ?no_shutdown_delay mark its DesiredTransition. It answers
// {"EvalID", "Index"}.
func (s *Server) allocStop(w http.ResponseWriter, req *http.Request) (any, error) {
	stop := &structs.AllocStopRequest{AllocID: req.PathValue("id")}
	for name, v := range map[string]*bool{"no_shuffle": &stop.NoShuffle, "reschedule": &stop.Reschedule, "no_shutdown_delay": &stop.NoShutdownDelay} {
		b, err := boolParam(req, name)
		if err != nil {
			return nil, err
		}
		*v = b
	}
	resp, err := rpcapi.AllocStop.Call(req.Context(), s.rpc, stop)
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return struct {
		EvalID string
		Index  uint64
	}{resp.EvalID, resp.Index}, nil
}

// gcResponse is the body of the GC endpoints (a drover extension: Nomad
// answers with nothing): the allocations collected.
type gcResponse struct {
	Collected []string
}

// clientGC is /v1/client/gc (and the client's part of PUT /v1/system/gc,
// nodes_drain.go): collect every terminal
// allocation of this agent's client now.
func (s *Server) clientGC(_ http.ResponseWriter, req *http.Request) (any, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	if node := req.URL.Query().Get("node_id"); node != "" && !strings.HasPrefix(nc.NodeID(), node) {
		return nil, newHTTPError(http.StatusBadRequest,
			"node %s is not this agent's node %s: send the request to node %s's agent", node, shortNodeID(nc.NodeID()), node)
	}
	ids, err := nc.CollectAllGarbage(req.Context())
	if err != nil {
		return nil, err
	}
	if ids == nil {
		ids = []string{}
	}
	return gcResponse{Collected: ids}, nil
}

// clientAllocGC is /v1/client/allocation/:id/gc: collect one terminal
// allocation now.
func (s *Server) clientAllocGC(_ http.ResponseWriter, req *http.Request) (any, error) {
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	if err := nc.CollectAlloc(req.Context(), alloc.ID); err != nil {
		return nil, err
	}
	return gcResponse{Collected: []string{alloc.ID}}, nil
}

// allocHasTask reports whether the allocation's group has the task; true
// when the allocation carries no job to tell.
func allocHasTask(alloc *structs.Allocation, task string) bool {
	names := allocTaskNames(alloc)
	return names == nil || slices.Contains(names, task)
}

// allocTaskNames returns the names of the tasks of the allocation's group.
func allocTaskNames(alloc *structs.Allocation) []string {
	if alloc.Job == nil {
		return nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil
	}
	names := make([]string, len(tg.Tasks))
	for i, t := range tg.Tasks {
		names[i] = t.Name
	}
	return names
}
