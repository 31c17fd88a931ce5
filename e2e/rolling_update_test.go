package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

func rollingJob(version string, exitCode int) string {
	runFor := `run_for = "1h"`
	if exitCode != 0 {
		runFor = fmt.Sprintf("run_for = \"100ms\"\n        exit_code = %d", exitCode)
	}
	return fmt.Sprintf(`job "roll" {
  update {
    max_parallel     = 1
    min_healthy_time = "1s"
    healthy_deadline = "20s"
    progress_deadline = "1m"
    auto_revert      = true
  }
  group "g" {
    count = 3
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "mock_driver"
      env {
        VERSION = %q
      }
      config {
        %s
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, version, runFor)
}

// TestRollingUpdate changes a job with max_parallel = 1: allocations are
// replaced one at a time, each after the previous one was reported
// healthy by the client; the deployment succeeds and the version is
// stable. A version whose allocations fail then fails its deployment and
// is rolled back to the stable version (auto_revert).
func TestRollingUpdate(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "roll.nomad.hcl", rollingJob("1", 0))); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	running := func(version string) (n, unhealthyNew int, why string) {
		stubs, _, err := c.Jobs().Allocations("roll", false, nil)
		if err != nil {
			return 0, 0, err.Error()
		}
		for _, s := range stubs {
			if s.DesiredStatus != "run" {
				continue
			}
			al, _, err := c.Allocations().Info(s.ID, nil)
			if err != nil {
				return 0, 0, err.Error()
			}
			if al.Job == nil || al.Job.TaskGroups[0].Tasks[0].Env["VERSION"] != version {
				continue
			}
			if al.ClientStatus == "running" {
				n++
			}
			if al.DeploymentID != "" && (al.DeploymentStatus == nil || al.DeploymentStatus.Healthy == nil) {
				unhealthyNew++
			}
		}
		return n, unhealthyNew, fmt.Sprintf("%d of version %s running", n, version)
	}
	waitFor(t, time.Minute, "version 1 running", func() (bool, string) {
		n, _, why := running("1")
		return n == 3, why
	})

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "roll.nomad.hcl", rollingJob("2", 0))); r.code != 0 {
		t.Fatalf("job run v2:\n%s", r)
	}
	maxInFlight := 0
	var dep *api.Deployment
	waitFor(t, 2*time.Minute, "the deployment of version 2 to succeed", func() (bool, string) {
		_, inflight, _ := running("2")
		maxInFlight = max(maxInFlight, inflight)
		var err error
		dep, _, err = c.Jobs().LatestDeployment("roll", nil)
		if err != nil || dep == nil {
			return false, fmt.Sprintf("no deployment (%v)", err)
		}
		return dep.Status == "successful", dep.Status + ": " + dep.StatusDescription
	})
	if maxInFlight > 1 {
		t.Errorf("%d new allocations awaited health at once, want at most max_parallel = 1", maxInFlight)
	}
	if n, _, why := running("2"); n != 3 {
		t.Fatalf("after the deployment: %s", why)
	}
	if st := dep.TaskGroups["g"]; st == nil || st.HealthyAllocs != 3 || st.PlacedAllocs != 3 {
		t.Errorf("deployment state: %+v", st)
	}
	job, _, err := c.Jobs().Info("roll", nil)
	if err != nil || job.Stable == nil || !*job.Stable {
		t.Fatalf("version 2 is not stable: %+v %v", job.Stable, err)
	}

	// Version 3's allocations exit with an error: unhealthy, the
	// deployment fails and the job goes back to version 2's spec.
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "roll.nomad.hcl", rollingJob("3", 1))); r.code != 0 {
		t.Fatalf("job run v3:\n%s", r)
	}
	waitFor(t, 2*time.Minute, "auto-revert", func() (bool, string) {
		job, _, err := c.Jobs().Info("roll", nil)
		if err != nil {
			return false, err.Error()
		}
		v := job.TaskGroups[0].Tasks[0].Env["VERSION"]
		return *job.Version == 3 && v == "2", fmt.Sprintf("version %d runs VERSION=%s", *job.Version, v)
	})
	deps, _, err := c.Jobs().Deployments("roll", nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed *api.Deployment
	for _, d := range deps {
		if d.JobVersion == 2 {
			failed = d
		}
	}
	if failed == nil || failed.Status != "failed" || !strings.Contains(failed.StatusDescription, "rolling back to job version 1") {
		t.Fatalf("deployment of version 2 (spec 3): %+v", failed)
	}
	waitFor(t, 2*time.Minute, "version 2's spec running again", func() (bool, string) {
		n, _, why := running("2")
		return n == 3, why
	})
}
