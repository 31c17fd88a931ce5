package e2e

import (
	"strings"
	"testing"
)

// TestJobRunFollowsToCompletion runs a batch job without -detach: the CLI
// follows the evaluation and waits until the allocations completed.
func TestJobRunFollowsToCompletion(t *testing.T) {
	a := startAgent(t)
	job := writeFile(t, "echo.nomad.hcl", `job "echo" {
  type = "batch"
  group "g" {
    count = 2
    task "echo" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	r := a.cli(t, "job", "run", job)
	if r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	for _, want := range []string{
		`Monitoring evaluation "`,
		`Evaluation status changed: "pending" -> "complete"`,
		`group "g"`,
		"All allocations completed",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("job run output lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "created: node"); n != 2 {
		t.Errorf("%d allocations reported created, want 2:\n%s", n, r.stdout)
	}
	st := a.cli(t, "job", "status", "echo")
	if st.code != 0 || !strings.Contains(st.stdout, "complete") {
		t.Errorf("job status:\n%s", st)
	}
}

// TestJobRunPlacementFailure asks for more memory than any node has: the
// CLI explains the failure and exits 2, as Nomad's does.
func TestJobRunPlacementFailure(t *testing.T) {
	a := startAgent(t)
	job := writeFile(t, "huge.nomad.hcl", `job "huge" {
  group "web" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 20
        memory = 100000000
      }
    }
  }
}
`)
	r := a.cli(t, "job", "run", job)
	if r.code != 2 {
		t.Fatalf("job run: want exit 2\n%s", r)
	}
	for _, want := range []string{
		`Task Group "web" (failed to place 1 allocation):`,
		`Dimension "memory" exhausted on 1 nodes`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("job run output lacks %q:\n%s", want, r.stdout)
		}
	}
	st := a.cli(t, "job", "status", "huge")
	if st.code != 0 || !strings.Contains(st.stdout, "Placement Failure") {
		t.Errorf("job status does not show the placement failure:\n%s", st)
	}
	if r := a.cli(t, "job", "stop", "-purge", "huge"); r.code != 0 {
		t.Errorf("job stop:\n%s", r)
	}
}
