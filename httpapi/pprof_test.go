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
