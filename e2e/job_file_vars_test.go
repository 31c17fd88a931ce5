package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

const scaledVarsJob = `variable "count" {
  type    = number
  default = 1
  validation {
    condition     = var.count >= 1 && var.count <= 4
    error_message = "count must be between 1 and 4."
  }
}

variable "greeting" {
  type = string
}

variable "tiers" {
  default = ["gold", "silver"]
}

locals {
  banner = upper(var.greeting)
}

job "scl" {
  meta {
    banner = local.banner
  }
  dynamic "constraint" {
    for_each = var.tiers
    content {
      attribute = "${meta.tier}"
      operator  = "!="
      value     = "banned-${constraint.value}"
    }
  }
  group "g" {
    count = var.count
    scaling {
      min = 1
      max = 4
    }
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
      env {
        GREETING = var.greeting
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

// liveAllocs counts the job's allocations the scheduler wants running
// and that are running.
func liveAllocs(c *api.Client, jobID string) (int, string) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return -1, err.Error()
	}
	n := 0
	var states []string
	for _, a := range allocs {
		states = append(states, a.DesiredStatus+"/"+a.ClientStatus)
		if a.DesiredStatus == "run" && a.ClientStatus == "running" {
			n++
		}
	}
	return n, fmt.Sprintf("%d running of %v", n, states)
}

// waitLive waits until exactly n allocations of the job run and no other
// is wanted running.
func waitLive(t *testing.T, c *api.Client, jobID string, n int) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("%d running allocations", n), func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		running, wanted := 0, 0
		for _, a := range allocs {
			if a.DesiredStatus == "run" {
				wanted++
				if a.ClientStatus == "running" {
					running++
				}
			}
		}
		return running == n && wanted == n, fmt.Sprintf("%d running, %d wanted", running, wanted)
	})
}

// TestJobFileVariablesAndScaling runs a job file with a -var-file, a
// NOMAD_VAR_ value, locals, a dynamic block and a scaling block, then
// scales its group up and down and reads the scaling events and policy.
func TestJobFileVariablesAndScaling(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	dir := t.TempDir()
	jobPath := filepath.Join(dir, "scl.nomad.hcl")
	varsPath := filepath.Join(dir, "prod.vars")
	for p, content := range map[string]string{jobPath: scaledVarsJob, varsPath: "count = 2\n"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	greeting := []string{"NOMAD_VAR_greeting=hello"}

	// A value failing the validation: nothing is registered.
	if r := a.cliEnv(t, greeting, "job", "run", "-detach", "-var-file", varsPath, "-var", "count=7", jobPath); r.code != 1 ||
		!strings.Contains(r.stderr, jobPath+":5:21: Invalid value for variable: count must be between 1 and 4.") {
		t.Fatalf("job run with count=7: want the validation error\n%s", r)
	}
	if jobs, _, err := c.Jobs().List(nil); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs after a refused run: %v %v", jobs, err)
	}

	if r := a.cliEnv(t, greeting, "job", "run", "-var-file", varsPath, jobPath); r.code != 0 {
		t.Fatalf("job run -var-file:\n%s", r)
	}
	waitLive(t, c, "scl", 2)
	job, _, err := c.Jobs().Info("scl", nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Meta["banner"] != "HELLO" || job.TaskGroups[0].Tasks[0].Env["GREETING"] != "hello" || len(job.Constraints) != 2 ||
		job.Constraints[1].RTarget != "banned-silver" {
		t.Fatalf("job = meta %v env %v constraints %+v", job.Meta, job.TaskGroups[0].Tasks[0].Env, job.Constraints)
	}

	// Scale up, then down; a count outside [1, 4] is refused.
	if r := a.cli(t, "job", "scale", "-detach", "scl", "g", "4"); r.code != 0 {
		t.Fatalf("job scale up:\n%s", r)
	}
	waitLive(t, c, "scl", 4)
	if r := a.cli(t, "job", "scale", "scl", "1"); r.code != 0 {
		t.Fatalf("job scale down:\n%s", r)
	}
	waitLive(t, c, "scl", 1)
	if r := a.cli(t, "job", "scale", "scl", "g", "9"); r.code != 1 ||
		!strings.Contains(r.stderr, `group "g": count 9 is outside the scaling block's bounds [1, 4]`) {
		t.Fatalf("job scale 9: want refused\n%s", r)
	}
	if n, why := liveAllocs(c, "scl"); n != 1 {
		t.Fatalf("after the refused scale: %s", why)
	}

	r := a.cli(t, "job", "scaling-events", "scl")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], "g           1      4") || !strings.HasPrefix(lines[2], "g           4      2") {
		t.Fatalf("job scaling-events:\n%s", r)
	}
	st, _, err := c.Jobs().ScaleStatus("scl", nil)
	if err != nil || st.TaskGroups["g"].Desired != 1 || st.TaskGroups["g"].Running != 1 {
		t.Fatalf("scale status = %+v, %v", st, err)
	}
	policies, _, err := c.Scaling().ListPolicies(&api.QueryOptions{Params: map[string]string{"job": "scl"}})
	if err != nil || len(policies) != 1 || policies[0].Target["Group"] != "g" || policies[0].Type != "horizontal" {
		t.Fatalf("scaling policies = %+v, %v", policies, err)
	}
	p, _, err := c.Scaling().GetPolicy(policies[0].ID, nil)
	if err != nil || *p.Min != 1 || *p.Max != 4 {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	job, _, err = c.Jobs().Info("scl", nil)
	if err != nil || *job.Version != 2 {
		t.Fatalf("version after two scales = %v, %v; want 2", job.Version, err)
	}
}

// TestJobFileUndefinedVariable checks that a job file using an undefined
// variable is refused with its position, by the CLI and by
// /v1/jobs/parse, and nothing is registered.
func TestJobFileUndefinedVariable(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	src := "job \"u\" {\n  group \"g\" {\n    count = var.replicas\n    task \"t\" {\n      driver = \"mock_driver\"\n    }\n  }\n}\n"
	path := writeFile(t, "u.nomad.hcl", src)
	if r := a.cli(t, "job", "run", path); r.code != 1 || !strings.Contains(r.stderr, path+":3:16: Unsupported attribute") {
		t.Fatalf("job run:\n%s", r)
	}
	if _, err := c.Jobs().ParseHCL(src, false); err == nil || !strings.Contains(err.Error(), ":3:16: Unsupported attribute") {
		t.Fatalf("parse: %v", err)
	}
	if jobs, _, err := c.Jobs().List(nil); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs = %v, %v; want none", jobs, err)
	}
}

// TestJobRestart restarts a job's allocations in place, one batch at a
// time, then replaces them with -reschedule.
func TestJobRestart(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	job := versionedJob(2)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "ver.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	waitLive(t, c, "ver", 2)
	before, _, err := c.Jobs().Allocations("ver", false, nil)
	if err != nil {
		t.Fatal(err)
	}

	r := a.cli(t, "job", "restart", "-batch-size", "1", "-yes", "ver")
	if r.code != 0 || !strings.Contains(r.stdout, "Restarting 2 allocations in 2 batches of at most 1") ||
		!strings.Contains(r.stdout, "All allocations restarted successfully!") {
		t.Fatalf("job restart:\n%s", r)
	}
	for _, stub := range before {
		waitFor(t, 30*time.Second, "a restart event of allocation "+stub.ID, func() (bool, string) {
			alloc, _, err := c.Allocations().Info(stub.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			var seen []string
			for _, ts := range alloc.TaskStates {
				for _, e := range ts.Events {
					seen = append(seen, e.Type)
					if e.Type == "Restart Signaled" {
						return true, ""
					}
				}
			}
			return false, fmt.Sprint(seen)
		})
	}

	if r := a.cli(t, "job", "restart", "-reschedule", "-group", "g", "-yes", "ver"); r.code != 0 {
		t.Fatalf("job restart -reschedule:\n%s", r)
	}
	waitFor(t, 60*time.Second, "two new running allocations", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("ver", false, nil)
		if err != nil {
			return false, err.Error()
		}
		fresh := 0
		for _, al := range allocs {
			if al.DesiredStatus == "run" && al.ClientStatus == "running" && al.ID != before[0].ID && al.ID != before[1].ID {
				fresh++
			}
		}
		return fresh == 2, fmt.Sprintf("%d new running", fresh)
	})
}
