package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// Native service discovery end to end: a raw_exec web server on a dynamic
// port registered as a Nomad service whose http check turns healthy (and
// with it the deployment), listed by the API and the CLI, gone once the
// job stops; and a failing check restarting its task through
// check_restart.

// nomadServiceJob is a service job id whose raw_exec task "web" serves its
// NOMAD_TASK_DIR (holding index.html) with busybox on the dynamic port
// "http", registered as Nomad service "<id>-web" with an http check of
// checkPath (checkExtra goes in its block) and a script check, which does
// not count for health (on_update = "ignore"), that index.html is written.
func nomadServiceJob(id, busybox, checkPath, checkExtra string) string {
	script := `echo "hello $NOMAD_ALLOC_ID" > "$NOMAD_TASK_DIR/index.html"; exec ` +
		busybox + ` httpd -f -p "$NOMAD_ADDR_http" -h "$NOMAD_TASK_DIR"`
	return fmt.Sprintf(`job %q {
  update {
    min_healthy_time = "2s"
    healthy_deadline = "2m"
  }

  group "g" {
    network {
      port "http" {}
    }

    service {
      name     = "%s-web"
      provider = "nomad"
      port     = "http"
      tags     = ["e2e", "alloc-${NOMAD_ALLOC_INDEX}"]

      check {
        type     = "http"
        path     = %q
        interval = "1s"
        timeout  = "2s"
        %s
      }

      check {
        name     = "index-written"
        type     = "script"
        task     = "web"
        command  = "/bin/sh"
        args     = ["-c", "test -f \"$NOMAD_TASK_DIR/index.html\""]
        interval = "1s"
        timeout  = "5s"
        on_update = "ignore"
      }
    }

    task "web" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, id, checkPath, checkExtra, script)
}

func TestServicesHTTPCheckTurnsHealthy(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	job := writeFile(t, "svc.nomad.hcl", nomadServiceJob("svc", bb, "/index.html", ""))
	if r := a.cli(t, "job", "run", "-detach", job); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "svc")
	_, port := allocPort(t, alloc, "http")

	var regs []*api.ServiceRegistration
	waitFor(t, portsRunTimeout, "the service to be registered", func() (bool, string) {
		var err error
		regs, _, err = c.Services().Get("svc-web", nil)
		if err != nil {
			return false, err.Error()
		}
		return len(regs) == 1, fmt.Sprintf("%d instances", len(regs))
	})
	r := regs[0]
	if r.Address != "127.0.0.1" || r.Port != port || r.AllocID != alloc.ID || r.JobID != "svc" ||
		strings.Join(r.Tags, ",") != "e2e,alloc-0" {
		t.Errorf("registration = %+v, want 127.0.0.1:%d of alloc %s tagged e2e,alloc-0", r, port, alloc.ID)
	}
	waitFor(t, portsRunTimeout, "the http and script checks to pass", func() (bool, string) {
		checks, err := c.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		passed := map[string]bool{}
		for _, st := range checks {
			ok := st.Status == "success" && st.Service == "svc-web" && st.Task == "web"
			switch st.Check {
			case "index-written":
				ok = ok && st.Mode == "readiness"
			default:
				ok = ok && st.StatusCode == 200 && st.Mode == "healthiness"
			}
			if !ok {
				return false, fmt.Sprintf("%+v", st)
			}
			passed[st.Check] = true
		}
		return len(passed) == 2, fmt.Sprintf("%d results", len(checks))
	})
	waitFor(t, portsRunTimeout, "the deployment to succeed on the check", func() (bool, string) {
		d, _, err := c.Jobs().LatestDeployment("svc", nil)
		if err != nil || d == nil {
			return false, fmt.Sprintf("%v %v", d, err)
		}
		return d.Status == api.DeploymentStatusSuccessful, d.Status + ": " + d.StatusDescription
	})
	if r := a.cli(t, "service", "info", "svc-web"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("127.0.0.1:%d  [e2e,alloc-0]", port)) {
		t.Errorf("service info:\n%s", r)
	}
	if r := a.cli(t, "service", "list"); r.code != 0 || !strings.Contains(r.stdout, "svc-web") {
		t.Errorf("service list:\n%s", r)
	}
	if r := a.cli(t, "alloc", "status", alloc.ID); r.code != 0 || !strings.Contains(r.stdout, "Nomad Service Checks:") || !strings.Contains(r.stdout, "success") {
		t.Errorf("alloc status:\n%s", r)
	}

	if r := a.cli(t, "job", "stop", "-detach", "svc"); r.code != 0 {
		t.Fatalf("job stop:\n%s", r)
	}
	waitFor(t, portsRunTimeout, "the service to go", func() (bool, string) {
		regs, _, err := c.Services().Get("svc-web", nil)
		if err != nil {
			return false, err.Error()
		}
		return len(regs) == 0, fmt.Sprintf("%d instances left", len(regs))
	})
}

func TestServicesFailingCheckRestartsTask(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	job := writeFile(t, "sick.nomad.hcl", nomadServiceJob("sick", bb, "/missing",
		`check_restart {
          limit = 2
          grace = "1s"
        }`))
	if r := a.cli(t, "job", "run", "-detach", job); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "sick")
	waitFor(t, portsRunTimeout, "check_restart to restart the task", func() (bool, string) {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		st := a.TaskStates["web"]
		if st == nil {
			return false, "no task state"
		}
		for _, e := range st.Events {
			if e.Type == "Restart Signaled" && strings.Contains(e.RestartReason, "unhealthy") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d restarts, %d events", st.Restarts, len(st.Events))
	})
	checks, err := c.Allocations().Checks(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range checks {
		if st.Check == "index-written" {
			continue
		}
		if st.Status == "success" || (st.StatusCode != 0 && st.StatusCode != 404) {
			t.Errorf("check result = %+v, want a failure (404)", st)
		}
	}
}

// TestServicesSurviveAgentRestart: a production agent killed with SIGKILL
// and started again leaves its task running and its service registered
// once, unchanged (the restarted agent reads what the servers hold and
// writes nothing), and its check passing again.
func TestServicesSurviveAgentRestart(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := newPersistentAgent(t, "svc-restart", roleCombined)
	// Tasks and services on loopback, as a dev agent's.
	cfg, err := os.ReadFile(a.configPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "client {\n", "client {\n  network_interface = \"lo\"\n", 1))
	if err := os.WriteFile(a.configPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, portsRunTimeout)
	c := a.client(t)
	runJob(t, a, "kept", nomadServiceJob("kept", bb, "/index.html", ""))
	alloc := portsRunningAlloc(t, c, "kept")
	checksPass := func() {
		t.Helper()
		waitFor(t, portsRunTimeout, "the checks to pass", func() (bool, string) {
			checks, err := c.Allocations().Checks(alloc.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			for _, st := range checks {
				if st.Status != "success" {
					return false, fmt.Sprintf("%+v", st)
				}
			}
			return len(checks) == 2, fmt.Sprintf("%d results", len(checks))
		})
	}
	checksPass()
	before, _, err := c.Services().Get("kept-web", nil)
	if err != nil || len(before) != 1 {
		t.Fatalf("before the restart: %+v, %v", before, err)
	}

	a.kill9(t)
	a.start(t)
	a.waitReady(t, portsRunTimeout)
	checksPass()
	after, _, err := c.Services().Get("kept-web", nil)
	if err != nil || len(after) != 1 {
		t.Fatalf("after the restart: %+v, %v", after, err)
	}
	if old, cur := before[0], after[0]; cur.ID != old.ID || cur.ModifyIndex != old.ModifyIndex || cur.CreateIndex != old.CreateIndex || cur.Port != old.Port {
		t.Errorf("registration changed across the restart:\nbefore %+v\nafter  %+v", before[0], after[0])
	}
	if out := a.sinceLastStart(); strings.Contains(out, "services deregistered") {
		t.Errorf("the restarted agent deregistered services:\n%s", out)
	}
	a.interrupt(t)
}

// TestServicesFailingCheckHoldsDeploymentBack: an update whose new
// allocation's check never passes fails its deployment at the healthy
// deadline, and the old allocation it would have replaced next keeps
// running the old version.
func TestServicesFailingCheckHoldsDeploymentBack(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	job := func(path string) string {
		hcl := nomadServiceJob("held", bb, path, "")
		hcl = strings.Replace(hcl, `healthy_deadline = "2m"`, "healthy_deadline = \"15s\"\n    max_parallel     = 1", 1)
		return strings.Replace(hcl, "group \"g\" {\n", "group \"g\" {\n    count = 2\n", 1)
	}
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v1.nomad.hcl", job("/index.html"))); r.code != 0 {
		t.Fatalf("job run v1:\n%s", r)
	}
	waitFor(t, portsRunTimeout, "version 0 to deploy on its checks", func() (bool, string) {
		d, _, err := c.Jobs().LatestDeployment("held", nil)
		if err != nil || d == nil {
			return false, fmt.Sprintf("%v %v", d, err)
		}
		return d.Status == api.DeploymentStatusSuccessful && d.JobVersion == 0, d.Status
	})
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v2.nomad.hcl", job("/missing"))); r.code != 0 {
		t.Fatalf("job run v2:\n%s", r)
	}
	var failed *api.Deployment
	waitFor(t, portsRunTimeout, "version 1's deployment to fail on its check", func() (bool, string) {
		d, _, err := c.Jobs().LatestDeployment("held", nil)
		if err != nil || d == nil {
			return false, fmt.Sprintf("%v %v", d, err)
		}
		failed = d
		return d.JobVersion == 1 && d.Status == api.DeploymentStatusFailed, fmt.Sprintf("version %d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
	})
	allocs, _, err := c.Jobs().Allocations("held", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	oldRunning := 0
	for _, al := range allocs {
		if al.ClientStatus == api.AllocClientStatusRunning && al.JobVersion == 0 {
			oldRunning++
		}
	}
	if oldRunning != 1 {
		t.Errorf("%d allocations of version 0 run after the failed deployment %s, want 1 held back", oldRunning, failed.ID)
	}
}
