package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	nomadapi "github.com/hashicorp/nomad/api"
)

func pprofServer(t *testing.T, debug bool) *httptest.Server {
	t.Helper()
	hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: fakeInfo{}, ParseJob: fakeParse,
		Logger: slog.New(slog.DiscardHandler), EnableDebug: debug})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// Without enable_debug every profile is refused, saying how to allow it.
func TestAgentPprofRefusedWithoutEnableDebug(t *testing.T) {
	c := apiClient(t, pprofServer(t, false))
	for _, name := range []string{"cmdline", "profile", "trace", "goroutine", "heap"} {
		_, err := c.Agent().Lookup(name, api.PprofOptions{}, nil)
		var ue *api.UnexpectedResponseError
		if !errors.As(err, &ue) || ue.StatusCode != http.StatusForbidden || !strings.Contains(ue.Message, "enable_debug = true") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAgentPprofServedWithEnableDebug(t *testing.T) {
	ts := pprofServer(t, true)
	c := apiClient(t, ts)
	gzipped := func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }
	cases := []struct {
		name  string
		opts  api.PprofOptions
		check func([]byte) bool
	}{
		{"cmdline", api.PprofOptions{}, func(b []byte) bool { return strings.HasPrefix(string(b), os.Args[0]) }},
		{"goroutine", api.PprofOptions{Debug: 2}, func(b []byte) bool { return strings.Contains(string(b), "agentPprof") }},
		{"goroutine", api.PprofOptions{}, gzipped},
		{"heap", api.PprofOptions{GC: true}, gzipped},
		{"allocs", api.PprofOptions{Debug: 1}, func(b []byte) bool { return strings.Contains(string(b), "heap profile:") }},
		{"profile", api.PprofOptions{Seconds: 1}, gzipped},
	}
	for _, tc := range cases {
		b, err := c.Agent().Lookup(tc.name, tc.opts, nil)
		if err != nil {
			t.Errorf("%s %+v: %v", tc.name, tc.opts, err)
			continue
		}
		if !tc.check(b) {
			t.Errorf("%s %+v: unexpected profile %.200q", tc.name, tc.opts, b)
		}
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/agent/pprof/nosuch", http.StatusNotFound, "goroutine"},
		{"/v1/agent/pprof/profile?seconds=100000", http.StatusBadRequest, "at most 300"},
		{"/v1/agent/pprof/heap?debug=x", http.StatusBadRequest, "debug"},
	} {
		resp, err := http.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(body.String(), tc.want) {
			t.Errorf("%s: %d %q", tc.path, resp.StatusCode, body.String())
		}
	}

	// Nomad's client reads the same endpoints.
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	b, err := nc.Agent().Lookup("goroutine", nomadapi.PprofOptions{Debug: 1}, nil)
	if err != nil || !strings.Contains(string(b), "goroutine profile:") {
		t.Errorf("Nomad's client: %v, %.200q", err, b)
	}
}

// TestAgentMembers: GET /v1/agent/members is the ServerMembers call of
// the server answering, in the shape Nomad's client reads.
func TestAgentMembers(t *testing.T) {
	h := (&fakeBackend{}).handlers()
	rpcapi.Handle(h, rpcapi.ServerMembers, func(context.Context, *structs.ServerMembersRequest) (*structs.ServerMembersResponse, error) {
		return &structs.ServerMembersResponse{ServerName: "a.global", ServerRegion: "global", ServerDC: "dc1",
			Members: []*structs.ServerMember{{Name: "a.global", Addr: "127.0.0.1", Port: 4648, Status: "alive"}}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Agent().Members()
	if err != nil {
		t.Fatal(err)
	}
	if m.ServerName != "a.global" || len(m.Members) != 1 || m.Members[0].Status != "alive" || m.Members[0].Port != 4648 {
		t.Errorf("members %+v", m)
	}
}

// selfNamed is an agent whose gossip member name is name.
type selfNamed struct {
	fakeInfo
	name string
}

func (a selfNamed) Self() *AgentSelf {
	return &AgentSelf{Member: AgentMember{Name: a.name, Addr: "127.0.0.1", Port: 4647}}
}

// TestAgentPprofWithACLs: with ACLs enabled the profiles are served to a
// token with agent:write whatever enable_debug says (Nomad's rule), and
// refused to others; ?server_id names this server, another one, or none
// (Nomad's 500 "unknown Nomad server X", which its client matches).
func TestAgentPprofWithACLs(t *testing.T) {
	h := (&fakeBackend{}).handlers()
	rpcapi.Handle(h, rpcapi.ServerMembers, func(context.Context, *structs.ServerMembersRequest) (*structs.ServerMembersResponse, error) {
		return &structs.ServerMembersResponse{ServerName: "a.global", Members: []*structs.ServerMember{
			{Name: "a.global", Addr: "127.0.0.1", Port: 4648, Status: "alive"},
			{Name: "b.global", Addr: "10.0.0.2", Port: 4648, Status: "alive"}}}, nil
	})
	res := fakeResolver{acls: map[string]*acl.ACL{
		"":     acl.New(mustPolicy(t, `agent = "read"`)),
		"mgmt": acl.ManagementACL(),
		"node": acl.New(mustPolicy(t, `node { policy = "write" }`)),
	}}
	hs := New(nil, &Config{RPC: h, Agent: selfNamed{name: "a.global"}, ParseJob: fakeParse,
		Logger: slog.New(slog.DiscardHandler), ACL: res}) // EnableDebug false
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)

	for _, tc := range []struct {
		path, token string
		code        int
		want        string
	}{
		{"/v1/agent/pprof/goroutine?debug=1", "mgmt", http.StatusOK, "goroutine profile:"},
		{"/v1/agent/pprof/goroutine?debug=1", "node", http.StatusForbidden, "Permission denied"},
		{"/v1/agent/pprof/goroutine?debug=1", "", http.StatusForbidden, "Permission denied"},
		{"/v1/agent/pprof/goroutine?debug=1&server_id=a.global", "mgmt", http.StatusOK, "goroutine profile:"},
		{"/v1/agent/pprof/goroutine?debug=1&server_id=b.global", "mgmt", http.StatusBadRequest, "10.0.0.2"},
		{"/v1/agent/pprof/goroutine?debug=1&server_id=unknown.global", "mgmt", http.StatusInternalServerError, "unknown Nomad server unknown.global"},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+tc.path, nil)
		if tc.token != "" {
			req.Header.Set("X-Nomad-Token", tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(body.String(), tc.want) {
			t.Errorf("%s (token %q): %d %.200q, want %d with %q", tc.path, tc.token, resp.StatusCode, body.String(), tc.code, tc.want)
		}
	}

	// Nomad's client, as its TestAgentCPUProfile calls it.
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL, SecretID: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := nc.Agent().CPUProfile(nomadapi.PprofOptions{Seconds: 1}, nil); err != nil || len(b) == 0 {
		t.Errorf("CPU profile: %v (%d bytes)", err, len(b))
	}
	_, err = nc.Agent().CPUProfile(nomadapi.PprofOptions{Seconds: 1, ServerID: "unknown.global"}, nil)
	if err == nil || !strings.Contains(err.Error(), "500 (unknown Nomad server unknown.global)") {
		t.Errorf("unknown server: %v", err)
	}
}
