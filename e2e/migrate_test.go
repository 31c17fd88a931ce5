package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// requireTwoAgents skips the test unless the binary can run a client-only
// agent joining a server over the network RPC transport (`agent -config`
// with client { servers = [...] }, also the -servers flag): that part of
// the agent is built separately and may not have landed yet.
func requireTwoAgents(t *testing.T) {
	t.Helper()
	requireBinary(t)
	out, _ := exec.Command(droverBin, "agent", "-h").CombinedOutput()
	if !strings.Contains(string(out), "-servers") || !strings.Contains(string(out), "-config") {
		t.Skip("this drover binary cannot run a client-only agent joining a server " +
			"(agent -config with client { servers = [...] } and the network RPC transport have not landed): " +
			"two agents on loopback are needed")
	}
}

// startConfiguredAgent starts `drover agent -config` with the given HCL and
// stops it with SIGINT when the test ends. It does not wait for anything.
func startConfiguredAgent(t *testing.T, name, hcl string, httpPort int) *agent {
	t.Helper()
	return launchAgent(t, agentSpec{name: name, config: hcl, httpPort: httpPort, args: []string{"-log-level", "debug"}})
}

// stickyJob writes, on first start, the ID of the alloc that created it
// into alloc/data/marker, and keeps it: a replacement that receives the
// data finds the first alloc's ID there.
func stickyJob(node string) string {
	return fmt.Sprintf(`job "sticky" {
  type = "service"

  group "g" {
    ephemeral_disk {
      sticky  = true
      migrate = true
      size    = 50
    }

    constraint {
      attribute = "${node.unique.name}"
      value     = %q
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "[ -f \"$NOMAD_ALLOC_DIR/data/marker\" ] || echo \"$NOMAD_ALLOC_ID\" > \"$NOMAD_ALLOC_DIR/data/marker\"; exec sleep 300"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, node)
}

// findAllocFile returns the path of rel inside the alloc dir of allocID,
// searched for under an agent's data dir.
func findAllocFile(dataDir, allocID, rel string) (string, error) {
	var found string
	err := filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		if d.IsDir() && d.Name() == allocID {
			if _, err := os.Stat(filepath.Join(p, rel)); err == nil {
				found = filepath.Join(p, rel)
				return fs.SkipAll
			}
		}
		return nil
	})
	if found == "" {
		return "", fmt.Errorf("no %s under %s for alloc %s (%v)", rel, dataDir, allocID, err)
	}
	return found, nil
}

// TestStickyMigrateAcrossAgents runs a sticky, migrating job on node-b (a
// client-only agent joining node-a over loopback), then moves it to node-a
// (a server and client agent) by changing its constraint: the replacement
// waits for the first alloc to stop, receives its data from node-b's
// agent, and finds the marker the first alloc wrote.
func TestStickyMigrateAcrossAgents(t *testing.T) {
	t.Parallel()
	requireTwoAgents(t)
	rawExec := `plugin "raw_exec" {
  config {
    enabled = true
  }
}`
	a, dataA, dataB := startTwoNodes(t, twoNodes{extraA: rawExec, extraB: rawExec})
	c := a.client(t)

	run := func(node string) {
		if r := a.cli(t, "job", "run", "-detach", writeFile(t, "sticky-"+node+".nomad.hcl", stickyJob(node))); r.code != 0 {
			t.Fatalf("job run on %s:\n%s", node, r)
		}
	}
	running := func(node string) *api.AllocationListStub {
		var found *api.AllocationListStub
		waitFor(t, 90*time.Second, "an alloc running on "+node, func() (bool, string) {
			allocs, _, err := c.Jobs().Allocations("sticky", true, nil)
			if err != nil {
				return false, err.Error()
			}
			var seen []string
			for _, al := range allocs {
				seen = append(seen, al.NodeName+":"+al.ClientStatus)
				if al.NodeName == node && al.ClientStatus == api.AllocClientStatusRunning {
					found = al
					return true, ""
				}
			}
			return false, strings.Join(seen, ", ")
		})
		return found
	}

	// From the client-only node to the server's node: the receiving client
	// finds the sending node's HTTP address with the servers' NodeGet,
	// which a client-only agent cannot call over the RPC transport yet.
	run("node-b")
	first := running("node-b")
	markerB := ""
	waitFor(t, 30*time.Second, "the marker on node-b", func() (bool, string) {
		p, err := findAllocFile(dataB, first.ID, filepath.Join("alloc", "data", "marker"))
		if err != nil {
			return false, err.Error()
		}
		markerB = p
		return true, ""
	})

	run("node-a")
	second := running("node-a")
	full, _, err := c.Allocations().Info(second.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.PreviousAllocation != first.ID {
		t.Errorf("replacement's PreviousAllocation = %q, want %q", full.PreviousAllocation, first.ID)
	}
	prev, _, err := c.Allocations().Info(first.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	switch prev.ClientStatus {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
	default:
		t.Errorf("first alloc is %s while its replacement runs", prev.ClientStatus)
	}
	p, err := findAllocFile(dataA, second.ID, filepath.Join("alloc", "data", "marker"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != first.ID {
		t.Errorf("marker on node-a = %q, want the first alloc's ID %s (its data did not follow)", got, first.ID)
	}
	if _, err := os.Stat(markerB); err == nil {
		t.Logf("node-b still has its copy at %s (kept until node-b's GC)", markerB)
	}
}
