package api

import (
	"fmt"
	"io"
	"strconv"
)

// Agent is the endpoints about the agent answering the request.
type Agent struct{ c *Client }

// Agent returns the agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c: c} }

// AgentSelf describes the agent: its configuration, its membership in the
// cluster and its statistics.
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember is a server as a member of the cluster.
type AgentMember struct {
	Name   string
	Addr   string
	Port   uint16
	Tags   map[string]string
	Status string
}

// Self returns the description of the agent (GET /v1/agent/self).
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.c.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ServerMembers is the cluster's servers, as the answering server knows
// them (GET /v1/agent/members).
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// Members returns the cluster's servers (GET /v1/agent/members); the
// agent asked must run a server.
func (a *Agent) Members() (*ServerMembers, error) {
	var out ServerMembers
	if _, err := a.c.query("/v1/agent/members", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Monitor streams the agent's log lines (GET /v1/agent/monitor) from now
// on, until stopCh is closed: q.Params take log_level (trace, debug,
// info, warn, error), log_json, log_include_location and node_id (the
// logs of that node's agent). Each frame's Data holds whole lines. The
// frames' channel is closed at the end of the stream; an error arrives on
// the second channel.
func (a *Agent) Monitor(stopCh <-chan struct{}, q *QueryOptions) (<-chan *StreamFrame, <-chan error) {
	body, err := a.c.stream("/v1/agent/monitor", q)
	if err != nil {
		return failedFrames(err)
	}
	return decodeFrames(body, stopCh, "monitor stream")
}

// PprofOptions choose a profile of GET /v1/agent/pprof/*.
type PprofOptions struct {
	// NodeID asks that node's agent instead of the one addressed.
	NodeID string
	// Seconds is the length of a CPU profile or trace (0: 1 second).
	Seconds int
	// Debug > 0 asks for a text profile instead of the binary one.
	Debug int
	// GC collects garbage before a heap profile.
	GC bool
}

func (o PprofOptions) params(q *QueryOptions) *QueryOptions {
	kv := []string{}
	if o.NodeID != "" {
		kv = append(kv, "node_id", o.NodeID)
	}
	if o.Seconds > 0 {
		kv = append(kv, "seconds", strconv.Itoa(o.Seconds))
	}
	if o.Debug > 0 {
		kv = append(kv, "debug", strconv.Itoa(o.Debug))
	}
	if o.GC {
		kv = append(kv, "gc", "1")
	}
	return withParams(q, kv...)
}

// pprof GETs /v1/agent/pprof/<name> and returns the body.
func (a *Agent) pprof(name string, opts PprofOptions, q *QueryOptions) ([]byte, error) {
	body, err := a.c.stream("/v1/agent/pprof/"+name, opts.params(q))
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", name, err)
	}
	return b, nil
}

// CPUProfile returns a CPU profile of the agent over opts.Seconds (the
// agent needs enable_debug).
func (a *Agent) CPUProfile(opts PprofOptions, q *QueryOptions) ([]byte, error) {
	return a.pprof("profile", opts, q)
}

// Trace returns an execution trace of the agent over opts.Seconds.
func (a *Agent) Trace(opts PprofOptions, q *QueryOptions) ([]byte, error) {
	return a.pprof("trace", opts, q)
}

// Lookup returns the agent's runtime profile named profile (goroutine,
// heap, allocs, threadcreate, block, mutex) or its command line
// ("cmdline").
func (a *Agent) Lookup(profile string, opts PprofOptions, q *QueryOptions) ([]byte, error) {
	return a.pprof(profile, opts, q)
}
