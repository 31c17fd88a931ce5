package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// canaryJob is a service job of two allocations whose updates place one
// canary first (canary = 1); its service registers with the tag "live",
// or "canary" from a canary allocation. With exitCode != 0 its task fails.
func canaryJob(version string, exitCode int) string {
	runFor := `run_for = "1h"`
	if exitCode != 0 {
		runFor = fmt.Sprintf("run_for = \"100ms\"\n        exit_code = %d", exitCode)
	}
	return fmt.Sprintf(`job "can" {
  update {
    max_parallel      = 1
    canary            = 1
    min_healthy_time  = "1s"
    healthy_deadline  = "20s"
    progress_deadline = "1m"
    auto_revert       = true
  }
  group "g" {
    count = 2
    network {
      port "http" {}
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    service {
      name        = "can-web"
      provider    = "nomad"
      port        = "http"
      tags        = ["live"]
      canary_tags = ["canary"]
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

// canaryAllocs sorts the job's allocations the server wants running by
// the VERSION their job sets: how many of each run, and the canaries.
type canaryAllocs struct {
	running  map[string]int
	canaries []*api.Allocation
}

func readCanaryAllocs(c *api.Client) (canaryAllocs, error) {
	out := canaryAllocs{running: map[string]int{}}
	stubs, _, err := c.Jobs().Allocations("can", false, nil)
	if err != nil {
		return out, err
	}
	for _, s := range stubs {
		if s.DesiredStatus != "run" {
			continue
		}
		al, _, err := c.Allocations().Info(s.ID, nil)
		if err != nil {
			return out, err
		}
		if al.ClientStatus == "running" {
			out.running[al.Job.TaskGroups[0].Tasks[0].Env["VERSION"]]++
		}
		if al.DeploymentStatus != nil && al.DeploymentStatus.Canary {
			out.canaries = append(out.canaries, al)
		}
	}
	return out, nil
}

// serviceTags returns the tags of the job's service registrations, by
// allocation ID.
func serviceTags(c *api.Client) (map[string]string, error) {
	regs, _, err := c.Services().Get("can-web", nil)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range regs {
		out[r.AllocID] = strings.Join(r.Tags, ",")
	}
	return out, nil
}

func startCanaryJob(t *testing.T, a *agent, c *api.Client) {
	t.Helper()
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "can.nomad.hcl", canaryJob("1", 0))); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	waitFor(t, 2*time.Minute, "version 1 running and its deployment done", func() (bool, string) {
		got, err := readCanaryAllocs(c)
		if err != nil {
			return false, err.Error()
		}
		dep, _, err := c.Jobs().LatestDeployment("can", nil)
		if err != nil || dep == nil {
			return false, fmt.Sprintf("no deployment (%v)", err)
		}
		return got.running["1"] == 2 && dep.Status == "successful", fmt.Sprintf("%v; deployment %s", got.running, dep.Status)
	})
}

// TestCanaryPromote updates a job with canary = 1: the canary runs beside
// the two old allocations, registered with the canary tags, and the
// deployment waits for `deployment promote`; then the old allocations are
// replaced and the promoted canary's service carries the normal tags.
func TestCanaryPromote(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	startCanaryJob(t, a, c)

	// job run follows the deployment until its canary is healthy and it
	// waits for the promotion.
	if r := a.cli(t, "job", "run", writeFile(t, "can.nomad.hcl", canaryJob("2", 0))); r.code != 0 ||
		!strings.Contains(r.stdout, "waits for its promotion: drover deployment promote") {
		t.Fatalf("job run v2:\n%s", r)
	}
	var dep *api.Deployment
	var canary *api.Allocation
	waitFor(t, 2*time.Minute, "a healthy canary beside version 1", func() (bool, string) {
		got, err := readCanaryAllocs(c)
		if err != nil {
			return false, err.Error()
		}
		dep, _, err = c.Jobs().LatestDeployment("can", nil)
		if err != nil || dep == nil || dep.JobVersion != 1 {
			return false, fmt.Sprintf("no deployment of version 1 (%v)", err)
		}
		st := dep.TaskGroups["g"]
		if len(got.canaries) == 1 {
			canary = got.canaries[0]
		}
		return st != nil && st.HealthyAllocs == 1 && len(got.canaries) == 1 && got.running["1"] == 2 && got.running["2"] == 1,
			fmt.Sprintf("running %v, %d canaries, deployment %s %+v", got.running, len(got.canaries), dep.StatusDescription, st)
	})
	if dep.StatusDescription != "Deployment is running but requires manual promotion" {
		t.Errorf("deployment description %q", dep.StatusDescription)
	}
	waitFor(t, time.Minute, "the canary's service with the canary tags", func() (bool, string) {
		tags, err := serviceTags(c)
		if err != nil {
			return false, err.Error()
		}
		return tags[canary.ID] == "canary", fmt.Sprint(tags)
	})
	r := a.cli(t, "deployment", "status", dep.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "Promoted") || !strings.Contains(r.stdout, "Canaries") {
		t.Errorf("deployment status shows no canary columns:\n%s", r)
	}

	if r := a.cli(t, "deployment", "promote", dep.ID); r.code != 0 {
		t.Fatalf("deployment promote:\n%s", r)
	}
	waitFor(t, 2*time.Minute, "the promoted deployment to succeed", func() (bool, string) {
		got, err := readCanaryAllocs(c)
		if err != nil {
			return false, err.Error()
		}
		d, _, err := c.Deployments().Info(dep.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return d.Status == "successful" && got.running["2"] == 2 && got.running["1"] == 0 && len(got.canaries) == 0,
			fmt.Sprintf("running %v, %d canaries, deployment %s", got.running, len(got.canaries), d.Status)
	})
	waitFor(t, time.Minute, "the promoted canary's service with the normal tags", func() (bool, string) {
		tags, err := serviceTags(c)
		if err != nil {
			return false, err.Error()
		}
		return tags[canary.ID] == "live", fmt.Sprint(tags)
	})
}

// TestCanaryAutoRevert updates a job with canary = 1 to a version whose
// task exits non-zero: the canary is unhealthy, the deployment fails, the
// job goes back to the stable version (auto_revert), the canary is
// stopped, and the old allocations never stopped running.
func TestCanaryAutoRevert(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	startCanaryJob(t, a, c)
	stubs, _, err := c.Jobs().Allocations("can", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var old []string
	for _, s := range stubs {
		old = append(old, s.ID)
	}

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "can.nomad.hcl", canaryJob("2", 1))); r.code != 0 {
		t.Fatalf("job run v2:\n%s", r)
	}
	waitFor(t, 2*time.Minute, "auto-revert", func() (bool, string) {
		job, _, err := c.Jobs().Info("can", nil)
		if err != nil {
			return false, err.Error()
		}
		v := job.TaskGroups[0].Tasks[0].Env["VERSION"]
		return *job.Version == 2 && v == "1", fmt.Sprintf("version %d runs VERSION=%s", *job.Version, v)
	})
	deps, _, err := c.Jobs().Deployments("can", nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed *api.Deployment
	for _, d := range deps {
		if d.JobVersion == 1 {
			failed = d
		}
	}
	if failed == nil || failed.Status != "failed" || !strings.Contains(failed.StatusDescription, "rolling back to job version 0") {
		t.Fatalf("canary deployment: %+v", failed)
	}
	waitFor(t, time.Minute, "the old allocations alone running", func() (bool, string) {
		stubs, _, err := c.Jobs().Allocations("can", false, nil)
		if err != nil {
			return false, err.Error()
		}
		var live []string
		for _, s := range stubs {
			if s.DesiredStatus == "run" && s.ClientStatus == "running" {
				live = append(live, s.ID)
			}
		}
		slices.Sort(live)
		slices.Sort(old)
		return slices.Equal(live, old), fmt.Sprintf("running %v, old %v", live, old)
	})
}
