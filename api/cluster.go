package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The endpoints of a cluster of servers: the gossip pool's members, the
// raft configuration, autopilot and snapshots.

// MembersOpts returns the gossip pool's members as the answering server
// sees them (GET /v1/agent/members), with query options (Nomad's name).
func (a *Agent) MembersOpts(q *QueryOptions) (*ServerMembers, error) {
	var out ServerMembers
	if _, err := a.c.query("/v1/agent/members", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// Join makes the agent's server join the servers at the serf addresses
// (PUT /v1/agent/join); it returns how many it joined.
func (a *Agent) Join(addrs ...string) (int, error) {
	v := url.Values{}
	for _, addr := range addrs {
		v.Add("address", addr)
	}
	var out struct {
		NumJoined int    `json:"num_joined"`
		Error     string `json:"error"`
	}
	if _, err := a.c.write(http.MethodPut, "/v1/agent/join?"+v.Encode(), nil, &out, nil); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return out.NumJoined, fmt.Errorf("join: %s", out.Error)
	}
	return out.NumJoined, nil
}

// ForceLeave makes the cluster forget a failed member (PUT
// /v1/agent/force-leave); with prune, at once.
func (a *Agent) ForceLeave(node string, prune bool) error {
	v := url.Values{"node": {node}}
	if prune {
		v.Set("prune", "true")
	}
	_, err := a.c.write(http.MethodPut, "/v1/agent/force-leave?"+v.Encode(), nil, nil, nil)
	return err
}

// RaftServer is one server of the raft configuration.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfiguration is the raft configuration.
type RaftConfiguration struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftGetConfiguration returns the raft configuration.
func (o *Operator) RaftGetConfiguration(q *QueryOptions) (*RaftConfiguration, error) {
	var out RaftConfiguration
	if _, err := o.c.query("/v1/operator/raft/configuration", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// RaftRemovePeerByID removes a server from the raft configuration.
func (o *Operator) RaftRemovePeerByID(id string, w *WriteOptions) error {
	_, err := o.c.write(http.MethodDelete, "/v1/operator/raft/peer?"+url.Values{"id": {id}}.Encode(), nil, nil, w)
	return err
}

// RaftRemovePeerByAddress removes the server at address from the raft
// configuration.
func (o *Operator) RaftRemovePeerByAddress(address string, w *WriteOptions) error {
	_, err := o.c.write(http.MethodDelete, "/v1/operator/raft/peer?"+url.Values{"address": {address}}.Encode(), nil, nil, w)
	return err
}

// AutopilotConfiguration is the autopilot configuration.
type AutopilotConfiguration struct {
	CleanupDeadServers      bool
	LastContactThreshold    time.Duration
	MaxTrailingLogs         uint64
	MinQuorum               uint
	ServerStabilizationTime time.Duration
	CreateIndex             uint64
	ModifyIndex             uint64
}

// autopilotWire is the configuration on the wire: durations as strings.
type autopilotWire struct {
	CleanupDeadServers      bool
	LastContactThreshold    string
	MaxTrailingLogs         uint64
	MinQuorum               uint
	ServerStabilizationTime string
	CreateIndex             uint64
	ModifyIndex             uint64
}

// MarshalJSON writes durations as strings, as the API takes them.
func (c *AutopilotConfiguration) MarshalJSON() ([]byte, error) {
	return json.Marshal(&autopilotWire{
		CleanupDeadServers: c.CleanupDeadServers, LastContactThreshold: c.LastContactThreshold.String(),
		MaxTrailingLogs: c.MaxTrailingLogs, MinQuorum: c.MinQuorum, ServerStabilizationTime: c.ServerStabilizationTime.String(),
		CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex,
	})
}

// UnmarshalJSON reads durations written as strings.
func (c *AutopilotConfiguration) UnmarshalJSON(b []byte) error {
	var w autopilotWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = AutopilotConfiguration{CleanupDeadServers: w.CleanupDeadServers, MaxTrailingLogs: w.MaxTrailingLogs,
		MinQuorum: w.MinQuorum, CreateIndex: w.CreateIndex, ModifyIndex: w.ModifyIndex}
	var err error
	if w.LastContactThreshold != "" {
		if c.LastContactThreshold, err = time.ParseDuration(w.LastContactThreshold); err != nil {
			return err
		}
	}
	if w.ServerStabilizationTime != "" {
		if c.ServerStabilizationTime, err = time.ParseDuration(w.ServerStabilizationTime); err != nil {
			return err
		}
	}
	return nil
}

// AutopilotGetConfiguration returns the autopilot configuration.
func (o *Operator) AutopilotGetConfiguration(q *QueryOptions) (*AutopilotConfiguration, *QueryMeta, error) {
	var out AutopilotConfiguration
	qm, err := o.c.query("/v1/operator/autopilot/configuration", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// AutopilotSetConfiguration sets the autopilot configuration; with cas,
// only if its ModifyIndex is the stored one's. It returns whether it was
// written.
func (o *Operator) AutopilotSetConfiguration(cfg *AutopilotConfiguration, cas bool, w *WriteOptions) (bool, error) {
	ep := "/v1/operator/autopilot/configuration"
	if cas {
		ep += "?cas=" + strconv.FormatUint(cfg.ModifyIndex, 10)
	}
	var ok bool
	if _, err := o.c.write(http.MethodPut, ep, cfg, &ok, w); err != nil {
		return false, err
	}
	return ok, nil
}

// ServerHealth is a server's health as the leader sees it.
type ServerHealth struct {
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

// OperatorHealthReply is the servers' health.
type OperatorHealthReply struct {
	Healthy          bool
	FailureTolerance int
	Servers          []ServerHealth
	Leader           string
	Voters           []string
}

// AutopilotServerHealth returns the servers' health. An unhealthy cluster
// answers 429 with the same body, which this returns with the error.
func (o *Operator) AutopilotServerHealth(q *QueryOptions) (*OperatorHealthReply, error) {
	rc, err := o.c.stream("/v1/operator/autopilot/health", q)
	var ue *UnexpectedResponseError
	if err != nil && !(errors.As(err, &ue) && ue.StatusCode == http.StatusTooManyRequests) {
		return nil, err
	}
	var out OperatorHealthReply
	if ue != nil {
		if jerr := json.Unmarshal([]byte(ue.Message), &out); jerr != nil {
			return nil, err
		}
		return &out, nil
	}
	defer rc.Close()
	if err := json.NewDecoder(rc).Decode(&out); err != nil {
		return nil, fmt.Errorf("decode the servers' health: %w", err)
	}
	return &out, nil
}

// Snapshot returns the archive of the cluster state; the caller reads it
// to the end and closes it.
func (o *Operator) Snapshot(q *QueryOptions) (io.ReadCloser, error) {
	return o.c.stream("/v1/operator/snapshot", q)
}

// SnapshotRestore replaces the cluster state with the archive read from in.
func (o *Operator) SnapshotRestore(in io.Reader, w *WriteOptions) (*WriteMeta, error) {
	return o.c.write(http.MethodPut, "/v1/operator/snapshot", in, nil, w)
}
