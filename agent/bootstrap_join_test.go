package agent

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestServerBootstrapExpectZeroWaitsToBeJoined: a non-dev server with
// bootstrap_expect = 0 and nothing to join bootstraps no cluster of its
// own (Nomad's meaning of 0): it has no leader and /v1/agent/health says
// why. Joined through another server's /v1/agent/join (as Nomad's API
// suite does), it becomes a voter of that cluster and replicates its
// state; before, it bootstrapped alone and the join was refused as a
// server of another cluster.
func TestServerBootstrapExpectZeroWaitsToBeJoined(t *testing.T) {
	a := startAgent(t, persistentConfig(t.TempDir(), true, false))
	cfgB := persistentConfig(t.TempDir(), true, false)
	cfgB.Server.BootstrapExpect = 0
	b := startAgent(t, cfgB)
	bs := b.agent.server

	if !bs.AwaitingJoin() {
		t.Fatalf("b does not wait to be joined: peers %v, leader %q", bs.Peers(), bs.Leader())
	}
	code, _, body := b.do("GET", "/v1/agent/health", "")
	if code != http.StatusInternalServerError || !strings.Contains(string(body), "waits to be joined to a cluster") {
		t.Fatalf("b's health: %d %s, want 500 saying it waits to be joined", code, body)
	}

	a.must("PUT", "/v1/jobs", batchJobBody("replicated"), nil)
	var joined struct {
		NumJoined int    `json:"num_joined"`
		Error     string `json:"error"`
	}
	a.must("PUT", "/v1/agent/join?address="+bs.SerfAddr(), "", &joined)
	if joined.NumJoined != 1 || joined.Error != "" {
		t.Fatalf("join = %+v, want 1 joined", joined)
	}
	waitFor(t, "b to be a voter of a's cluster holding its job", func() bool {
		j, err := bs.State().JobByID(nil, structs.DefaultNamespace, "replicated")
		return err == nil && j != nil && len(bs.Peers()) == 2 && bs.Leader() == a.agent.RPCAddr()
	})
	if bs.AwaitingJoin() {
		t.Error("b still says it waits to be joined")
	}
	if !slices.Contains(bs.Peers(), b.agent.RPCAddr()) {
		t.Errorf("b's raft peers %v lack b (%s)", bs.Peers(), b.agent.RPCAddr())
	}
	var health struct {
		Server struct {
			Ok bool `json:"ok"`
		} `json:"server"`
	}
	b.must("GET", "/v1/agent/health", "", &health)
	if !health.Server.Ok {
		t.Error("b is not healthy once joined")
	}
}

// TestDevServerBootstrapsAlone: -dev keeps bootstrapping its one server
// whatever bootstrap_expect a config file gives (Nomad's dev mode sets 1).
func TestDevServerBootstrapsAlone(t *testing.T) {
	cases := []struct {
		name string
		cfg  *Config
		want bool
	}{
		{"dev", &Config{DevMode: true}, true},
		{"dev with 0 from a file", &Config{DevMode: true, Server: ServerConfig{BootstrapExpect: 0}}, true},
		{"server with 1", &Config{Server: ServerConfig{Enabled: true, BootstrapExpect: 1}}, true},
		{"server with 0", &Config{Server: ServerConfig{Enabled: true}}, false},
		{"server with 3", &Config{Server: ServerConfig{Enabled: true, BootstrapExpect: 3}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.bootstrapsAlone(); got != tc.want {
				t.Errorf("bootstrapsAlone = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestServerWithStateRestartsWithExpectZero: a single server that formed
// its cluster before (bootstrap_expect = 1, or 0 under drover's old
// meaning) restarts on its state with bootstrap_expect = 0 and leads again:
// only an empty server waits to be joined.
func TestServerWithStateRestartsWithExpectZero(t *testing.T) {
	dir := t.TempDir()
	first := startAgent(t, persistentConfig(dir, true, false))
	first.must("PUT", "/v1/jobs", batchJobBody("kept"), nil)
	first.stop()

	cfg := persistentConfig(dir, true, false)
	cfg.Server.BootstrapExpect = 0
	again := startAgent(t, cfg)
	if again.agent.server.AwaitingJoin() {
		t.Fatal("a server with state waits to be joined")
	}
	waitFor(t, "the restarted server to lead", func() bool { return again.agent.server.IsLeader() })
	var job structs.Job
	again.must("GET", "/v1/job/kept", "", &job)
	if job.ID != "kept" {
		t.Errorf("job after restart = %+v", job)
	}
}
