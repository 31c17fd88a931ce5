package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestPlacementExample runs examples/placement.nomad.hcl (a constraint, a
// spread and affinities at group and task level) on a dev agent: the job
// file reaches the scheduler, the allocations run, and `alloc status
// -verbose` shows the scores the spread and the affinities gave the node.
func TestPlacementExample(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	example, err := filepath.Abs(filepath.Join("..", "examples", "placement.nomad.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if r := a.cli(t, "job", "run", "-detach", example); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	c := a.client(t)
	job, _, err := c.Jobs().Info("placement", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.TaskGroups) != 1 || len(job.TaskGroups[0].Spreads) != 1 || len(job.TaskGroups[0].Affinities) != 1 ||
		len(job.TaskGroups[0].Tasks[0].Affinities) != 1 {
		t.Fatalf("the stored job lost its spread or affinities: %+v", job.TaskGroups[0])
	}
	if w := *job.TaskGroups[0].Spreads[0].Weight; w != 100 {
		t.Errorf("spread weight = %d, want 100", w)
	}
	var allocs []*api.AllocationListStub
	waitFor(t, 90*time.Second, "three running allocations", func() (bool, string) {
		allocs, _, err = c.Jobs().Allocations("placement", false, nil)
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, al := range allocs {
			if al.ClientStatus == api.AllocClientStatusRunning {
				running++
			}
		}
		return running == 3, "running: " + strings.Repeat("*", running)
	})
	r := a.cli(t, "alloc", "status", "-verbose", allocs[0].ID)
	if r.code != 0 {
		t.Fatalf("alloc status:\n%s", r)
	}
	for _, want := range []string{"Placement Metrics", "binpack", "node-affinity", "allocation-spread", "final score", allocs[0].NodeID} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("alloc status -verbose lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := a.cli(t, "job", "stop", "-detach", "placement"); r.code != 0 {
		t.Errorf("job stop:\n%s", r)
	}
}

// TestPlacementBadInput: a spread whose targets exceed 100% is refused at
// its line by `job run`, and by the HTTP API with a 400 naming the field;
// nothing is registered.
func TestPlacementBadInput(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	file := writeFile(t, "bad.nomad.hcl", `job "bad" {
  group "g" {
    spread {
      attribute = "${meta.rack}"
      target "r1" {
        percent = 80
      }
      target "r2" {
        percent = 40
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`)
	r := a.cli(t, "job", "run", file)
	if r.code == 0 || !strings.Contains(r.stderr, "bad.nomad.hcl:3:5") || !strings.Contains(r.stderr, "add up to 120") {
		t.Errorf("job run of a bad spread:\n%s", r)
	}
	c := a.client(t)
	weight := 0
	job := &api.Job{ID: api.String("bad"), TaskGroups: []*api.TaskGroup{{
		Name:    api.String("g"),
		Spreads: []*api.Spread{{Attribute: "${meta.rack}", Weight: &weight}},
		Tasks:   []*api.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"}}},
	}}}
	_, _, err := c.Jobs().Register(job, nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), `group "g": spread ${meta.rack}: weight 0 must be in [1, 100]`) {
		t.Errorf("register with spread weight 0: %v", err)
	}
	if jobs, _, err := c.Jobs().List(nil); err != nil || len(jobs) != 0 {
		t.Errorf("jobs after refused registrations: %v, %v", jobs, err)
	}
}
