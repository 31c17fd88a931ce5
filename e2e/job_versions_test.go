package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func versionedJob(count int) string {
	return fmt.Sprintf(`job "ver" {
  group "g" {
    count = %d
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, count)
}

// TestJobPlanHistoryRevert plans a change (exit 1, diff and dry run),
// runs it with -check-index, lists the versions and reverts.
func TestJobPlanHistoryRevert(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	v0 := writeFile(t, "ver.nomad.hcl", versionedJob(1))
	if r := a.cli(t, "job", "run", "-detach", v0); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	if r := a.cli(t, "job", "plan", v0); r.code != 0 || !strings.Contains(r.stdout, `Job: "ver"`) {
		t.Fatalf("plan of the unchanged job: want exit 0\n%s", r)
	}

	v1 := writeFile(t, "ver.nomad.hcl", versionedJob(3))
	r := a.cli(t, "job", "plan", v1)
	if r.code != 1 {
		t.Fatalf("plan of a count change: want exit 1\n%s", r)
	}
	for _, want := range []string{`+/- Job: "ver"`, `+/- Task Group: "g" (2 create, 1 in-place update)`, `+/- Count: "1" => "3"`,
		"- All tasks successfully allocated.", "drover job run -check-index "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r.stdout)
		}
	}
	var index string
	for _, l := range strings.Split(r.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "Job Modify Index: "); ok {
			index = rest
		}
	}
	if r := a.cli(t, "job", "run", "-detach", "-check-index", "1", v1); r.code == 0 {
		t.Fatalf("job run with a stale -check-index succeeded:\n%s", r)
	}
	if r := a.cli(t, "job", "run", "-detach", "-check-index", index, v1); r.code != 0 {
		t.Fatalf("job run -check-index %s:\n%s", index, r)
	}
	waitFor(t, 30*time.Second, "three allocations", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("ver", false, nil)
		if err != nil {
			return false, err.Error()
		}
		return len(allocs) == 3, fmt.Sprintf("%d allocs", len(allocs))
	})

	h := a.cli(t, "job", "history", "-p", "ver")
	if h.code != 0 || !strings.Contains(h.stdout, "Version     = 1") || !strings.Contains(h.stdout, "Version     = 0") ||
		!strings.Contains(h.stdout, `+/- Count: "1" => "3"`) {
		t.Fatalf("job history:\n%s", h)
	}
	if r := a.cli(t, "job", "revert", "-detach", "ver", "0"); r.code != 0 {
		t.Fatalf("job revert:\n%s", r)
	}
	job, _, err := c.Jobs().Info("ver", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *job.Version != 2 || *job.TaskGroups[0].Count != 1 {
		t.Fatalf("after revert: version %d count %d", *job.Version, *job.TaskGroups[0].Count)
	}
}
