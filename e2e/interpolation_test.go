package e2e

import (
	"strings"
	"testing"
)

// TestInterpolationInDriverConfig runs a raw_exec task whose args
// reference the node, its attributes, the job's meta and the task's
// environment: the task prints them resolved (they used to reach it
// literally), and an unknown reference unchanged.
func TestInterpolationInDriverConfig(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	job := writeFile(t, "interp.nomad.hcl", `job "interp" {
  type = "batch"
  meta {
    owner = "team-${node.datacenter}"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      env {
        CONF = "${NOMAD_TASK_DIR}/app.conf"
      }
      config {
        command = "/bin/echo"
        args = [
          "node=${node.unique.name}",
          "id=${node.unique.id}",
          "kernel=${attr.kernel.name}",
          "dc=${node.datacenter}",
          "owner=${NOMAD_META_owner}",
          "conf=${env["CONF"]}",
          "alloc=${NOMAD_SHORT_ALLOC_ID}",
          "unknown=${attr.nope}",
        ]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	if r := a.cli(t, "job", "run", job); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	stub, why := jobAlloc(t, c, "interp")
	if stub == nil {
		t.Fatal(why)
	}
	node, _, err := c.Nodes().Info(stub.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := a.cli(t, "alloc", "logs", stub.ID, "t")
	if r.code != 0 {
		t.Fatalf("alloc logs:\n%s", r)
	}
	want := strings.Join([]string{
		"node=" + node.Name,
		"id=" + node.ID,
		"kernel=linux",
		"dc=" + node.Datacenter,
		"owner=team-" + node.Datacenter,
		"conf=",
		"alloc=" + alloc.ID[:8],
		"unknown=${attr.nope}",
	}, " ")
	got := strings.TrimSpace(r.stdout)
	// conf= is the host path of the task's local directory: check its end.
	gotFields, wantFields := strings.Fields(got), strings.Fields(want)
	if len(gotFields) != len(wantFields) {
		t.Fatalf("task printed %q, want %q", got, want)
	}
	for i, w := range wantFields {
		g := gotFields[i]
		if strings.HasPrefix(w, "conf=") {
			if !strings.HasPrefix(g, "conf=/") || !strings.HasSuffix(g, "/t/local/app.conf") {
				t.Errorf("field %d = %q, want conf=<alloc dir>/t/local/app.conf", i, g)
			}
			continue
		}
		if g != w {
			t.Errorf("field %d = %q, want %q", i, g, w)
		}
	}
}
