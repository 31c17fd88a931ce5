package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestNodeMetaApplyPlacesAndPersists: `node meta apply` on a running
// (non -dev) agent makes a job constrained on the new key fit the node,
// `node status -verbose` shows it, and the dynamic metadata is still there
// after the agent restarts on the same data dir.
func TestNodeMetaApplyPlacesAndPersists(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "metanode", roleCombined)
	a.start(t)
	a.waitReady(t, agentStartWait)
	c := a.client(t)

	if r := a.cli(t, "node", "meta", "apply", "-unset", "connect.log_level", "rack=r9"); r.code != 0 || r.stdout != "" {
		t.Fatalf("node meta apply:\n%s", r)
	}
	if r := a.cli(t, "node", "meta", "apply", "bad key=x"); r.code == 0 || !strings.Contains(r.stderr, `node metadata key "bad key" is invalid`) {
		t.Fatalf("node meta apply of a bad key:\n%s", r)
	}

	file := writeFile(t, "rack.nomad.hcl", `job "rack" {
  type = "batch"
  constraint {
    attribute = "${meta.rack}"
    value     = "r9"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`)
	if r := a.cli(t, "job", "run", "-detach", file); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	// A bound on a loaded machine; the wait ends with the placement.
	waitFor(t, 2*time.Minute, "the job placed on the node", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("rack", false, nil)
		if err != nil || len(allocs) == 0 {
			return false, fmt.Sprintf("allocs %d, %v", len(allocs), err)
		}
		return true, ""
	})
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes = %v, %v", nodes, err)
	}
	r := a.cli(t, "node", "status", "-verbose", nodes[0].ID)
	if r.code != 0 || !strings.Contains(r.stdout, "\nMeta\n") || !strings.Contains(r.stdout, "rack ") || strings.Contains(r.stdout, "connect.log_level") {
		t.Fatalf("node status -verbose:\n%s", r)
	}

	a.interrupt(t)
	a.start(t)
	a.waitReady(t, agentStartWait)
	r = a.cli(t, "node", "meta", "read", "-json")
	var got api.NodeMetaResponse
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
		t.Fatalf("node meta read after restart:\n%s", r)
	}
	if got.Meta["rack"] != "r9" || got.Dynamic["rack"] == nil || *got.Dynamic["rack"] != "r9" {
		t.Fatalf("meta after restart = %+v", got)
	}
	if v, ok := got.Dynamic["connect.log_level"]; !ok || v != nil || got.Meta["connect.log_level"] != "" || got.Static["connect.log_level"] != "info" {
		t.Fatalf("the unset default key after restart = %+v", got)
	}
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil || node.Meta["rack"] != "r9" {
		t.Fatalf("the servers' node after restart: meta %v, %v", node.Meta, err)
	}
}
