package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestNomadStyleAgentConfig starts the real binary as Nomad's API test
// harness does: a JSON config in a file without an extension, with Nomad
// keys drover does not have, plus Nomad's agent flags. The node carries
// Nomad's attributes, the ignored settings are logged once each, and a job
// with distinct_property places one allocation per rack.
func TestNomadStyleAgentConfig(t *testing.T) {
	t.Parallel()
	requireBinary(t)
	port, rpc, dataDir := freePort(t), freePort(t), t.TempDir()
	cfg := fmt.Sprintf(`{"name": "nomad-style", "data_dir": %q, "bind_addr": "127.0.0.1",
  "disable_update_check": true, "log_level": "DEBUG",
  "ports": {"http": %d, "rpc": %d, "serf": %d},
  "server": {"enabled": true, "bootstrap_expect": 1},
  "client": {"enabled": true, "options": {"driver.raw_exec.enable": "1", "driver.allowlist": "raw_exec"}},
  "consul": {"address": "127.0.0.1:8500"},
  "vault": {"enabled": false}, "acl": {"enabled": false}}`, dataDir, port, rpc, freePort(t))
	a := launchAgent(t, agentSpec{name: "nomad-style", config: cfg, configFile: "nomad-config", httpPort: port, dataDir: dataDir,
		args: []string{"-meta", "rack=r1", "-node-class", "edge", "-network-interface", "lo"}, wait: waitNode})
	nodes, _, err := a.client(t).Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v, %v", nodes, err)
	}
	nodeID := nodes[0].ID
	out := a.output.String()
	for _, key := range []string{"key=consul"} { // ports.serf is honoured since clustering
		if n := strings.Count(out, key+" "); n != 1 {
			t.Errorf("%d warning lines with %s, want 1", n, key)
		}
	}
	if strings.Contains(out, "key=vault") || strings.Contains(out, "key=acl") {
		t.Error("a disabled vault or acl block drew a warning")
	}

	r := a.cli(t, "node", "status", "-verbose", nodeID)
	if r.code != 0 {
		t.Fatalf("node status: %s", r)
	}
	for _, want := range []string{"nomad.version", "unique.network.ip-address", "127.0.0.1", "os.signals", "kernel.arch", "unique.storage.volume", "edge"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("node status -verbose lacks %q:\n%s", want, r.stdout)
		}
	}

	job := writeFile(t, "racks.nomad.hcl", `job "racks" {
  datacenters = ["dc1"]
  constraint {
    distinct_property = "${meta.rack}"
  }
  constraint {
    attribute = "${attr.nomad.version}"
    operator  = "version"
    value     = ">= 1.0"
  }
  group "web" {
    count = 2
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 300"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	r = a.cli(t, "job", "run", "-detach", job)
	if r.code != 0 {
		t.Fatalf("job run: %s", r)
	}
	waitFor(t, 60*time.Second, "one allocation placed and one blocked by distinct_property", func() (bool, string) {
		r := a.cli(t, "job", "status", "racks")
		return strings.Contains(r.stdout, `distinct_property: ${meta.rack} = \"r1\" already has 1 of 1 allocations`), r.stdout
	})
	allocs, _, err := a.client(t).Jobs().Allocations("racks", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 1 {
		t.Errorf("%d allocations, want 1 (one rack)", len(allocs))
	}
	// The agent is not in -dev mode: its tasks would outlive it.
	if r := a.cli(t, "job", "stop", "-detach", "racks"); r.code != 0 {
		t.Fatalf("job stop: %s", r)
	}
	waitFor(t, 60*time.Second, "the allocation to stop", func() (bool, string) {
		for _, al := range allocs {
			info, _, err := a.client(t).Allocations().Info(al.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			if info.ClientStatus != api.AllocClientStatusComplete && info.ClientStatus != api.AllocClientStatusFailed {
				return false, info.ClientStatus
			}
		}
		return true, ""
	})
}
