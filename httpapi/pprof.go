package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// maxProfileSeconds bounds the duration of a CPU profile or an execution
// trace.
const maxProfileSeconds = 300

// agentPprof is GET /v1/agent/pprof/{profile}: the agent's runtime
// profiles, as Go's pprof tools read them. As Nomad's: with ACLs enabled
// they are served to a token with agent:write (the route's requirement),
// without ACLs only with the agent's enable_debug (403 otherwise).
// ?server_id names the server to profile: this agent's own name (or
// "leader" when it leads) is served here, another server's is a 400
// naming its address, and a name no server has is Nomad's 500 "unknown
// Nomad server X". cmdline is the agent's command line
// (NUL-separated); profile a CPU profile and trace an execution trace
// over ?seconds (default 1); any other name is a runtime/pprof profile
// (goroutine, heap, allocs, threadcreate, block, mutex) with ?debug=N
// (0: the binary format, 1 and 2: text) and, for heap, ?gc=1 to collect
// garbage first. A ?node_id of another node is served by that node's
// agent (client_forward.go).
func (s *Server) agentPprof(w http.ResponseWriter, req *http.Request) {
	if !s.debug && s.acl == nil {
		writeError(w, req, structs.NewError(structs.KindPermission,
			"the profiling endpoints are off: set enable_debug = true in the agent's configuration and restart it "+
				"(or enable ACLs: a token with agent:write may then read profiles)"))
		return
	}
	if id := req.URL.Query().Get("server_id"); id != "" {
		if err := s.profiledHere(req, id); err != nil {
			writeError(w, req, err)
			return
		}
	}
	name := req.PathValue("profile")
	var (
		body        []byte
		contentType = "application/octet-stream"
		err         error
	)
	switch name {
	case "cmdline":
		body, contentType = []byte(strings.Join(os.Args, "\x00")), "text/plain; charset=utf-8"
	case "profile":
		body, err = timedProfile(req, cpuProfile)
	case "trace":
		body, err = timedProfile(req, executionTrace)
	default:
		var text bool
		body, text, err = lookupProfile(req, name)
		if text {
			contentType = "text/plain; charset=utf-8"
		}
	}
	if err != nil {
		writeError(w, req, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if contentType == "application/octet-stream" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	_, _ = w.Write(body)
}

// profiledHere checks that ?server_id=id names this agent's server: its
// member name, or "leader" when it is the leader.
func (s *Server) profiledHere(req *http.Request, id string) error {
	self := s.agent.Self()
	if s.agent.IsServer() {
		if id == self.Member.Name {
			return nil
		}
		if id == "leader" && s.agent.Leader() == net.JoinHostPort(self.Member.Addr, strconv.Itoa(int(self.Member.Port))) {
			return nil
		}
	}
	opts, err := queryOptions(req)
	if err != nil {
		return err
	}
	resp, err := rpcapi.ServerMembers.Call(req.Context(), s.rpc, &structs.ServerMembersRequest{QueryOptions: opts})
	if err != nil {
		return fmt.Errorf("look up server %q: %w", id, err)
	}
	for _, m := range resp.Members {
		if m.Name == id {
			return structs.Invalid("server_id=%q is another agent: ask its own HTTP API (the agent at %s) for its profiles", id, m.Addr)
		}
	}
	// Nomad's words, which its API clients match.
	return newHTTPError(http.StatusInternalServerError, "unknown Nomad server %s", id)
}

// timedProfile runs record for ?seconds (default 1), or until the request
// ends, and returns what it wrote.
func timedProfile(req *http.Request, record func(ctx context.Context, buf *bytes.Buffer) error) ([]byte, error) {
	secs, err := int64Param(req, "seconds")
	if err != nil {
		return nil, err
	}
	if secs == 0 {
		secs = 1
	}
	if secs > maxProfileSeconds {
		return nil, structs.Invalid("seconds=%d is too long: at most %d", secs, maxProfileSeconds)
	}
	ctx, cancel := context.WithTimeout(req.Context(), time.Duration(secs)*time.Second)
	defer cancel()
	var buf bytes.Buffer
	if err := record(ctx, &buf); err != nil {
		return nil, err
	}
	if err := req.Context().Err(); err != nil {
		return nil, fmt.Errorf("profile: request ended: %w", err)
	}
	return buf.Bytes(), nil
}

// cpuProfile records a CPU profile until ctx is done.
func cpuProfile(ctx context.Context, buf *bytes.Buffer) error {
	if err := pprof.StartCPUProfile(buf); err != nil {
		return structs.NewError(structs.KindConflict, "cannot start a CPU profile: %v (another one runs: try again when it ends)", err)
	}
	<-ctx.Done()
	pprof.StopCPUProfile()
	return nil
}

// executionTrace records an execution trace until ctx is done.
func executionTrace(ctx context.Context, buf *bytes.Buffer) error {
	if err := trace.Start(buf); err != nil {
		return structs.NewError(structs.KindConflict, "cannot start a trace: %v (another one runs: try again when it ends)", err)
	}
	<-ctx.Done()
	trace.Stop()
	return nil
}

// lookupProfile writes the runtime/pprof profile name, and says whether
// it is text (?debug > 0).
func lookupProfile(req *http.Request, name string) ([]byte, bool, error) {
	p := pprof.Lookup(name)
	if p == nil {
		return nil, false, structs.NotFound("profile", name+" (use cmdline, profile, trace or one of "+profileNames()+")")
	}
	debug, err := int64Param(req, "debug")
	if err != nil {
		return nil, false, err
	}
	gc, err := int64Param(req, "gc")
	if err != nil {
		return nil, false, err
	}
	if name == "heap" && gc > 0 {
		runtime.GC()
	}
	var buf bytes.Buffer
	if err := p.WriteTo(&buf, int(debug)); err != nil {
		return nil, false, fmt.Errorf("write profile %s: %w", name, err)
	}
	return buf.Bytes(), debug > 0, nil
}

// profileNames lists the runtime/pprof profiles.
func profileNames() string {
	var names []string
	for _, p := range pprof.Profiles() {
		names = append(names, p.Name())
	}
	return strings.Join(names, ", ")
}
