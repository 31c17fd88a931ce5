package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// The endpoints of a cluster of servers, in Nomad's shapes: the gossip
// pool's members (join, force-leave), the raft configuration, autopilot and
// snapshots. Each is one call of an rpcapi method: the members and joins
// are the answering server's own (a client-only agent asks one of its
// servers), the rest is the leader's, unless ?stale.

// maxSnapshotBytes bounds a snapshot archive sent to restore.
const maxSnapshotBytes = 64 << 20

// registerClusterRoutes adds the cluster endpoints.
func (s *Server) registerClusterRoutes(rt *router) {
	get := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodGet) }
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	get("/v1/agent/members", s.agentMembers)
	get("/v1/agent/servers", s.agentServers)
	write("/v1/agent/join", s.agentJoin)
	write("/v1/agent/force-leave", s.agentForceLeave)
	get("/v1/operator/raft/configuration", s.raftConfiguration)
	rt.handle("/v1/operator/raft/peer", s.wrap(s.raftRemovePeer), http.MethodDelete)
	get("/v1/operator/autopilot/configuration", s.autopilotGetConfig)
	write("/v1/operator/autopilot/configuration", s.autopilotSetConfig)
	get("/v1/operator/autopilot/health", s.autopilotHealth)
	rt.handle("/v1/operator/snapshot", http.HandlerFunc(s.snapshotSave), http.MethodGet)
	rt.handle("/v1/operator/snapshot", s.wrapLimit(s.snapshotRestore, maxSnapshotBytes), http.MethodPut, http.MethodPost)
}

// agentMembers is GET /v1/agent/members: the gossip pool as the server
// answering sees it.
func (s *Server) agentMembers(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ServerMembers.Call(req.Context(), s.rpc, &structs.ServerMembersRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return resp, nil
}

// agentServers is GET /v1/agent/servers: the servers' RPC addresses that
// this agent knows.
func (s *Server) agentServers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return nonNil(s.agent.Peers()), nil
}

// joinResponse is the body of PUT /v1/agent/join.
type joinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// agentJoin is PUT /v1/agent/join?address=A&address=B: this server joins
// the gossip pool of the servers at those serf addresses.
func (s *Server) agentJoin(_ http.ResponseWriter, req *http.Request) (any, error) {
	if !s.agent.IsServer() {
		return nil, structs.Invalid("this agent runs no server: only servers join servers (a client lists them in client.servers)")
	}
	addrs := req.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, structs.Invalid("missing ?address: give the serf address (host:4648) of a server to join")
	}
	resp, err := rpcapi.ServerJoin.Call(req.Context(), s.rpc, &structs.ServerJoinRequest{Addresses: addrs})
	if err != nil {
		return nil, err
	}
	return &joinResponse{NumJoined: resp.NumJoined, Error: resp.Error}, nil
}

// agentForceLeave is PUT /v1/agent/force-leave?node=NAME[&prune]: the
// gossip pool forgets a failed member, and the leader removes it from
// raft.
func (s *Server) agentForceLeave(_ http.ResponseWriter, req *http.Request) (any, error) {
	node := req.URL.Query().Get("node")
	if node == "" {
		return nil, structs.Invalid("missing ?node: name the member to remove (drover server members lists them)")
	}
	prune, err := boolParam(req, "prune")
	if err != nil {
		return nil, err
	}
	if _, err := rpcapi.ServerForceLeave.Call(req.Context(), s.rpc, &structs.ForceLeaveRequest{Node: node, Prune: prune}); err != nil {
		return nil, err
	}
	return nil, nil
}

// raftConfiguration is GET /v1/operator/raft/configuration.
func (s *Server) raftConfiguration(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.RaftGetConfiguration.Call(req.Context(), s.rpc, &structs.RaftConfigurationRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return &struct {
		Servers []*structs.RaftServer
		Index   uint64
	}{resp.Servers, resp.Index}, nil
}

// raftRemovePeer is DELETE /v1/operator/raft/peer?id=ID (or ?address=A).
func (s *Server) raftRemovePeer(w http.ResponseWriter, req *http.Request) (any, error) {
	q := req.URL.Query()
	resp, err := rpcapi.RaftRemovePeer.Call(req.Context(), s.rpc, &structs.RaftPeerRemoveRequest{ID: q.Get("id"), Address: q.Get("address")})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// autopilotJSON is the autopilot configuration as Nomad's API writes it:
// durations as strings ("200ms").
type autopilotJSON struct {
	CleanupDeadServers      bool
	LastContactThreshold    string
	MaxTrailingLogs         uint64
	MinQuorum               uint
	ServerStabilizationTime string
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool
	CreateIndex             uint64
	ModifyIndex             uint64
}

// autopilotGetConfig is GET /v1/operator/autopilot/configuration.
func (s *Server) autopilotGetConfig(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.AutopilotGetConfig.Call(req.Context(), s.rpc, &structs.AutopilotConfigRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	c := resp.Config
	if c == nil {
		c = structs.DefaultAutopilotConfig()
	}
	return &autopilotJSON{
		CleanupDeadServers: c.CleanupDeadServers, LastContactThreshold: c.LastContactThreshold.String(),
		MaxTrailingLogs: c.MaxTrailingLogs, MinQuorum: c.MinQuorum, ServerStabilizationTime: c.ServerStabilizationTime.String(),
		CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex,
	}, nil
}

// autopilotSetConfig is PUT /v1/operator/autopilot/configuration[?cas=N]:
// the answer is true when the configuration was written (a CAS may find
// it changed).
func (s *Server) autopilotSetConfig(w http.ResponseWriter, req *http.Request) (any, error) {
	var body autopilotJSON
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	cfg := structs.AutopilotConfig{
		CleanupDeadServers: body.CleanupDeadServers, MaxTrailingLogs: body.MaxTrailingLogs, MinQuorum: body.MinQuorum,
		ModifyIndex: body.ModifyIndex,
	}
	var err error
	if cfg.LastContactThreshold, err = parseDurationField("LastContactThreshold", body.LastContactThreshold); err != nil {
		return nil, err
	}
	if cfg.ServerStabilizationTime, err = parseDurationField("ServerStabilizationTime", body.ServerStabilizationTime); err != nil {
		return nil, err
	}
	r := &structs.AutopilotSetConfigRequest{Config: cfg}
	if v := req.URL.Query().Get("cas"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, structs.Invalid("cas %q is not an index: give the configuration's ModifyIndex", v)
		}
		r.CAS, r.Config.ModifyIndex = true, idx
	}
	resp, err := rpcapi.AutopilotSetConfig.Call(req.Context(), s.rpc, r)
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return resp.Updated, nil
}

// parseDurationField parses a duration field of a body ("" is 0).
func parseDurationField(name, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, structs.Invalid("%s %q is not a duration (200ms, 10s)", name, v)
	}
	return d, nil
}

// serverHealthJSON is a server's health as Nomad's API writes it.
type serverHealthJSON struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact string
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	StableSince time.Time
}

// autopilotHealth is GET /v1/operator/autopilot/health: 200 when every
// server is healthy, 429 otherwise (as Nomad), with the same body.
func (s *Server) autopilotHealth(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.AutopilotHealth.Call(req.Context(), s.rpc, &structs.AutopilotHealthRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := struct {
		Healthy          bool
		FailureTolerance int
		Servers          []serverHealthJSON
		Leader           string
		Voters           []string
	}{Healthy: resp.Healthy, FailureTolerance: resp.FailureTolerance, Leader: resp.Leader, Voters: nonNil(resp.Voters),
		Servers: []serverHealthJSON{}}
	for _, h := range resp.Servers {
		lc := h.LastContact.String()
		if h.LastContact < 0 {
			lc = "unreachable"
		}
		out.Servers = append(out.Servers, serverHealthJSON{
			ID: h.ID, Name: h.Name, Address: h.Address, SerfStatus: h.SerfStatus, Version: h.Version, Leader: h.Leader,
			LastContact: lc, LastTerm: h.LastTerm, LastIndex: h.LastIndex, Healthy: h.Healthy, Voter: h.Voter,
			StableSince: h.StableSince,
		})
	}
	if !resp.Healthy {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	return &out, nil
}

// snapshotSave is GET /v1/operator/snapshot[?stale]: the archive of the
// cluster state (server/snapshot), with its SHA-256 in the Digest header
// as Nomad's API client checks it.
func (s *Server) snapshotSave(w http.ResponseWriter, req *http.Request) {
	opts, err := queryOptions(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	resp, err := rpcapi.SnapshotSave.Call(req.Context(), s.rpc, &structs.SnapshotSaveRequest{QueryOptions: opts})
	if err != nil {
		writeError(w, req, err)
		return
	}
	setQueryMeta(w, resp.QueryMeta)
	sum := sha256.Sum256(resp.Archive)
	w.Header().Set("Digest", "sha-256="+base64.StdEncoding.EncodeToString(sum[:]))
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.Archive)))
	if _, err := io.Copy(w, bytes.NewReader(resp.Archive)); err != nil {
		s.logger.Debug("write snapshot", "error", err)
	}
}

// snapshotRestore is PUT /v1/operator/snapshot: the body is an archive
// from snapshotSave; the cluster state becomes its state.
func (s *Server) snapshotRestore(w http.ResponseWriter, req *http.Request) (any, error) {
	archive, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	if len(archive) == 0 {
		return nil, structs.Invalid("the request body is empty: send the snapshot archive (drover operator snapshot restore <file>)")
	}
	resp, err := rpcapi.SnapshotRestore.Call(req.Context(), s.rpc, &structs.SnapshotRestoreRequest{Archive: archive})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}
