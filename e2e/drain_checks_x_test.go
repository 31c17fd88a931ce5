package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestNodeDrainWaitsForChecks drains a node running a count = 2 service
// whose Nomad script check passes only while a marker file exists, with
// migrate { max_parallel = 1, health_check = "checks" }: while the first
// replacement's check fails the drain moves nothing more (well past
// min_healthy_time, though its task runs); once the check passes, the
// second allocation moves and the drain completes. Parallel: its agents
// have their own ports and data dirs, and the marker is its own.
func TestNodeDrainWaitsForChecks(t *testing.T) {
	t.Parallel()
	nc := startNodesCluster(t, "node-a")
	c := nc.server.client(t)
	marker := filepath.Join(t.TempDir(), "healthy")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const minHealthy = 2 * time.Second
	job := fmt.Sprintf(`job "drainchk" {
  type = "service"
  group "g" {
    count = 2
    migrate {
      max_parallel     = 1
      health_check     = "checks"
      min_healthy_time = "%s"
      healthy_deadline = "5m"
    }
    network {
      port "http" {}
    }
    service {
      name     = "drainchk"
      provider = "nomad"
      port     = "http"
      check {
        name     = "marker"
        type     = "script"
        task     = "t"
        command  = "/bin/sh"
        args     = ["-c", "test -f %s"]
        interval = "1s"
        timeout  = "5s"
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, minHealthy, marker)
	if r := nc.server.cli(t, "job", "run", "-detach", writeFile(t, "drainchk.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	// live returns the job's allocations the servers want running, by
	// node name, with their full records.
	live := func() map[string][]*api.Allocation {
		out := map[string][]*api.Allocation{}
		for _, stub := range nodeJobAllocs(t, c, "drainchk") {
			if stub.DesiredStatus != "run" {
				continue
			}
			a, _, err := c.Allocations().Info(stub.ID, nil)
			if err != nil {
				t.Fatalf("allocation %s: %v", stub.ID, err)
			}
			out[stub.NodeName] = append(out[stub.NodeName], a)
		}
		return out
	}
	healthy := func(a *api.Allocation) bool {
		return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
	}
	waitFor(t, 90*time.Second, "2 allocations on node-a, healthy by their checks", func() (bool, string) {
		n := 0
		for _, a := range live()["node-a"] {
			if a.ClientStatus == "running" && healthy(a) {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d healthy", n)
	})
	if err := os.Remove(marker); err != nil { // from now on the check fails
		t.Fatal(err)
	}
	nc.addClient(t, "node-b")
	nc.waitReady(t, 2)
	aID := nc.nodeID(t, "node-a")
	if r := nc.server.cli(t, "node", "drain", "-enable", "-yes", "-deadline", "10m", aID[:8]); r.code != 0 {
		t.Fatalf("node drain:\n%s", r)
	}
	// The first replacement runs on node-b with its check failing: wait
	// until its task has run for five times min_healthy_time (what
	// health_check = "task_states" would have needed), then the drain
	// must still hold the second allocation on node-a.
	var replacement *api.Allocation
	waitFor(t, 2*time.Minute, "the first replacement running on node-b for 5 x min_healthy_time", func() (bool, string) {
		onB := live()["node-b"]
		if len(onB) > 1 {
			t.Fatalf("%d allocations moved to node-b while the first replacement's check fails; want 1 (max_parallel = 1)", len(onB))
		}
		if len(onB) != 1 || onB[0].ClientStatus != "running" {
			return false, fmt.Sprintf("%d on node-b", len(onB))
		}
		replacement = onB[0]
		ts := replacement.TaskStates["t"]
		if ts == nil || ts.StartedAt.IsZero() {
			return false, "its task has not started"
		}
		up := time.Since(ts.StartedAt)
		return up > 5*minHealthy, fmt.Sprintf("its task up %s", up.Round(time.Millisecond))
	})
	now := live()
	if len(now["node-a"]) != 1 || len(now["node-b"]) != 1 {
		t.Fatalf("while the replacement's check fails: %d on node-a, %d on node-b; want 1 and 1 (max_parallel = 1)", len(now["node-a"]), len(now["node-b"]))
	}
	if healthy(now["node-b"][0]) {
		t.Fatalf("the replacement %s is healthy while its check fails: %+v", replacement.ID, now["node-b"][0].DeploymentStatus)
	}

	if err := os.WriteFile(marker, nil, 0o644); err != nil { // the check passes again
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the drain to complete with both allocations on node-b", func() (bool, string) {
		n, _, err := c.Nodes().Info(aID, nil)
		if err != nil {
			return false, err.Error()
		}
		l := live()
		return n.DrainStrategy == nil && n.LastDrain != nil && n.LastDrain.Status == "complete" && len(l["node-b"]) == 2,
			fmt.Sprintf("drain %+v, %d on node-b, %d on node-a", n.DrainStrategy, len(l["node-b"]), len(l["node-a"]))
	})
}
