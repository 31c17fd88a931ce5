package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestJobRunFollowsToCompletion runs a batch job without -detach: the CLI
// follows the evaluation and waits until the allocations completed.
func TestJobRunFollowsToCompletion(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// serviceJob is a raw_exec service job "svc" running script, deployed with
// min_healthy_time, whose task is neither restarted nor rescheduled.
func serviceJob(script, minHealthy string) string {
	return `job "svc" {
  update {
    max_parallel     = 1
    min_healthy_time = "` + minHealthy + `"
    healthy_deadline = "1m"
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "` + script + `"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`
}

// TestJobRunFollowsDeployment runs a service job's first version: job run
// follows its deployment until the allocation is healthy, and exits 0.
func TestJobRunFollowsDeployment(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	r := a.cli(t, "job", "run", writeFile(t, "svc.nomad.hcl", serviceJob("sleep 300", "1s")))
	if r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	for _, want := range []string{
		`Evaluation status changed: "pending" -> "complete"`,
		`Monitoring deployment "`,
		`" is healthy`,
		`" successful`,
		"Deployment completed successfully",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("job run output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestJobRunFailingServiceExits1 runs a service job whose task runs for a
// few seconds and then fails: its allocation is running when the
// evaluation ends, but the job does not come up. job run follows the
// deployment, which fails, explains why and exits 1 (it used to exit 0 as
// soon as the allocation ran).
func TestJobRunFailingServiceExits1(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	r := a.cli(t, "job", "run", writeFile(t, "svc.nomad.hcl", serviceJob("sleep 4; exit 3", "30s")))
	if r.code != 1 {
		t.Fatalf("job run: want exit 1\n%s", r)
	}
	for _, want := range []string{
		`Monitoring deployment "`,
		`" failed: Failed due to unhealthy allocations`,
		`Task "t" failed: Terminated: Exit Code: 3`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("job run output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestJobSummaryAfterPurge: after `job stop -purge`, a job registered
// again with the same ID starts its summary from zero instead of counting
// the purged job's allocations.
func TestJobSummaryAfterPurge(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	failing := writeFile(t, "once.nomad.hcl", `job "once" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exit 1"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	if r := a.cli(t, "job", "run", failing); r.code != 1 {
		t.Fatalf("job run of a failing batch job: want exit 1\n%s", r)
	}
	sum, _, err := c.Jobs().Summary("once", nil)
	if err != nil || sum.Summary["g"].Failed != 1 {
		t.Fatalf("summary of the first job = %+v, %v; want 1 failed", sum, err)
	}
	if r := a.cli(t, "job", "stop", "-purge", "once"); r.code != 0 {
		t.Fatalf("job stop -purge:\n%s", r)
	}
	sleeping := strings.Replace(strings.Replace(readFile(t, failing), `"exit 1"`, `"sleep 300"`, 1), `type = "batch"`, `type = "batch"
  meta {
    second = "yes"
  }`, 1)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "once.nomad.hcl", sleeping)); r.code != 0 {
		t.Fatalf("job run again:\n%s", r)
	}
	waitFor(t, time.Minute, "the new job's summary", func() (bool, string) {
		sum, _, err := c.Jobs().Summary("once", nil)
		if err != nil {
			return false, err.Error()
		}
		g := sum.Summary["g"]
		return g.Running == 1, fmt.Sprintf("%+v", g)
	})
	sum, _, err = c.Jobs().Summary("once", nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := sum.Summary["g"]; g.Failed != 0 || g.Complete != 0 || g.Running != 1 {
		t.Errorf("summary of the new job = %+v, want only 1 running (the purged job's failure counted)", g)
	}
	r := a.cli(t, "job", "status", "once")
	if r.code != 0 || !regexp.MustCompile(`(?m)^g +0 +0 +1 +0 +0 +0`).MatchString(r.stdout) {
		t.Errorf("job status summary:\n%s", r)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
