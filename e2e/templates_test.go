package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// templateJob is a service job whose raw_exec task renders a template
// from the variable nomad/jobs/<id> and an env template, prints both when
// it starts (and again on SIGHUP), and runs until stopped.
func templateJob(id, changeMode string) string {
	return fmt.Sprintf(`job %q {
  group "g" {
    restart {
      attempts = 3
      delay    = "1s"
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      template {
        data = <<EOF
{{ with nomadVar "nomad/jobs/%s" }}pw={{ .password }}{{ end }}
EOF
        destination   = "local/app.conf"
        change_mode   = %q
        change_signal = "SIGHUP"
        splay         = "0s"
      }
      template {
        data        = "APP_MODE={{ env \"NOMAD_TASK_NAME\" }}-mode\n"
        destination = "secrets/app.env"
        env         = true
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo hup; cat local/app.conf' HUP; echo start; cat local/app.conf; echo env=$APP_MODE; while true; do sleep 1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, id, id, changeMode)
}

// taskEvents returns the events of the job's task "t".
func tmplTaskEvents(t *testing.T, c *api.Client, jobID string) (*api.Allocation, []*api.TaskEvent) {
	t.Helper()
	stub, _ := jobAlloc(t, c, jobID)
	if stub == nil {
		return nil, nil
	}
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	if err != nil || alloc.TaskStates["t"] == nil {
		return alloc, nil
	}
	return alloc, alloc.TaskStates["t"].Events
}

// TestTemplates runs jobs whose templates read a variable: the task waits,
// with a "Missing: nomadVar" event, until the variable exists, starts with
// the rendered file and the env template's variable, and is restarted
// (change_mode restart) or signalled (change_mode signal) when
// `drover var put` changes the variable. A template that does not parse
// is refused by `job run` with its place in the job file.
func TestTemplates(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	logs := func(allocID string) string {
		r := a.cli(t, "alloc", "logs", allocID, "t")
		return r.stdout
	}
	put := func(path, item string) {
		t.Helper()
		if r := a.cli(t, "var", "put", path, item); r.code != 0 {
			t.Fatalf("var put: %s", r)
		}
	}

	t.Run("restart", func(t *testing.T) {
		if r := a.cli(t, "job", "run", "-detach", writeFile(t, "tmpl.nomad.hcl", templateJob("tmpl", "restart"))); r.code != 0 {
			t.Fatalf("job run:\n%s", r)
		}
		waitFor(t, 120*time.Second, "the Missing event", func() (bool, string) {
			alloc, events := tmplTaskEvents(t, c, "tmpl")
			for _, e := range events {
				if e.Type == "Template" && strings.Contains(e.DisplayMessage, `Missing: nomadVar "nomad/jobs/tmpl"`) {
					if st := alloc.TaskStates["t"]; st.State == "running" {
						t.Fatalf("the task started before its template rendered: %+v", events)
					}
					return true, ""
				}
			}
			return false, fmt.Sprintf("events %+v", events)
		})
		put("nomad/jobs/tmpl", "password=one")
		var allocID string
		waitFor(t, 120*time.Second, "the task to start with the rendered file", func() (bool, string) {
			alloc, _ := tmplTaskEvents(t, c, "tmpl")
			if alloc == nil {
				return false, "no alloc"
			}
			allocID = alloc.ID
			out := logs(alloc.ID)
			return strings.Contains(out, "pw=one") && strings.Contains(out, "env=t-mode"), out
		})
		put("nomad/jobs/tmpl", "password=two")
		waitFor(t, 120*time.Second, "the restart with the new value", func() (bool, string) {
			alloc, events := tmplTaskEvents(t, c, "tmpl")
			st := alloc.TaskStates["t"]
			out := logs(allocID)
			return st.Restarts == 1 && st.State == "running" && strings.Contains(out, "pw=two"), fmt.Sprintf("restarts %d, logs %q, events %+v", st.Restarts, out, events)
		})
		_, events := tmplTaskEvents(t, c, "tmpl")
		found := false
		for _, e := range events {
			found = found || (e.Type == "Restart Signaled" && strings.Contains(e.DisplayMessage, "local/app.conf re-rendered"))
		}
		if !found {
			t.Errorf("no Restart Signaled event naming the template: %+v", events)
		}
	})

	t.Run("signal", func(t *testing.T) {
		put("nomad/jobs/tmplsig", "password=one")
		if r := a.cli(t, "job", "run", "-detach", writeFile(t, "tmplsig.nomad.hcl", templateJob("tmplsig", "signal"))); r.code != 0 {
			t.Fatalf("job run:\n%s", r)
		}
		var allocID string
		waitFor(t, 120*time.Second, "the task to start", func() (bool, string) {
			alloc, _ := tmplTaskEvents(t, c, "tmplsig")
			if alloc == nil {
				return false, "no alloc"
			}
			allocID = alloc.ID
			out := logs(alloc.ID)
			return strings.Contains(out, "pw=one"), out
		})
		put("nomad/jobs/tmplsig", "password=two")
		waitFor(t, 120*time.Second, "the signal", func() (bool, string) {
			out := logs(allocID)
			return strings.Contains(out, "hup\npw=two"), out
		})
		alloc, events := tmplTaskEvents(t, c, "tmplsig")
		if st := alloc.TaskStates["t"]; st.Restarts != 0 {
			t.Errorf("a signal template restarted the task: %+v", events)
		}
	})

	t.Run("bad template refused", func(t *testing.T) {
		job := `job "bad" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data = <<EOF
line one
{{ nomadVarr "nomad/jobs/bad" }}
EOF
        destination = "local/x"
      }
      config {
        command = "/bin/true"
      }
    }
  }
}
`
		path := writeFile(t, "bad.nomad.hcl", job)
		r := a.cli(t, "job", "run", path)
		want := path + `:8:4: Invalid template: function "nomadVarr" is not defined`
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("job run of a bad template: want %q, got %s", want, r)
		}
		if _, _, err := c.Jobs().Info("bad", nil); err == nil {
			t.Error("the refused job was registered")
		}
	})
}

// TestTemplatesAgentRestartKeepsTasks kills a combined agent (-9) whose
// task renders a template, and starts it again: the agent re-attaches to
// the task and resumes watching the template without restarting the task
// (its rendered content is unchanged, unlike Nomad #10920); a variable
// change after that restarts it exactly once.
func TestTemplatesAgentRestartKeepsTasks(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "tmplkeep", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)
	put := func(item string) {
		t.Helper()
		if r := a.cli(t, "var", "put", "nomad/jobs/tmplkeep", item); r.code != 0 {
			t.Fatalf("var put: %s", r)
		}
	}
	put("password=one")
	runJob(t, a, "tmplkeep", templateJob("tmplkeep", "restart"))
	var allocID string
	waitFor(t, surviveRunTimeout, "the task to run with the rendered file", func() (bool, string) {
		stub, why := jobAlloc(t, c, "tmplkeep")
		if stub == nil {
			return false, why
		}
		allocID = stub.ID
		out := a.cli(t, "alloc", "logs", stub.ID, "t").stdout
		return strings.Contains(out, "pw=one"), out
	})

	a.kill9(t)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, surviveRunTimeout, "the agent to re-attach to the task", func() (bool, string) {
		a.checkAlive(t)
		return strings.Contains(a.sinceLastStart(), "re-attached to task"), "not yet"
	})
	put("password=two")
	waitFor(t, surviveRunTimeout, "the restart for the change", func() (bool, string) {
		ts, err := taskEvents(c, allocID)
		if err != nil {
			return false, err.Error()
		}
		out := a.cli(t, "alloc", "logs", allocID, "t").stdout
		return ts.State == "running" && ts.Restarts >= 1 && strings.Contains(out, "pw=two"), eventsString(ts)
	})
	ts, err := taskEvents(c, allocID)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Restarts != 1 || countEvents(ts, "Restart Signaled") != 1 {
		t.Errorf("restarts = %d, want only the change's:%s", ts.Restarts, eventsString(ts))
	}
	if r := a.cli(t, "job", "stop", "tmplkeep"); r.code != 0 {
		t.Fatalf("job stop: %s", r)
	}
}

// TestTemplatesListService renders a template that lists a Nomad service
// registered by another job: nomadService reads the agent's service API.
func TestTemplatesListService(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	web := `job "websvc" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "websvc"
      provider = "nomad"
      port     = "http"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`
	lister := `job "lister" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data        = "{{ range nomadService \"websvc\" }}addr={{ .Address }}:{{ .Port }}{{ end }}\n"
        destination = "local/svc"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/svc; while true; do sleep 1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "websvc.nomad.hcl", web)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "lister.nomad.hcl", lister)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	waitFor(t, 120*time.Second, "the lister to render the service's address", func() (bool, string) {
		stub, why := jobAlloc(t, c, "lister")
		if stub == nil {
			return false, why
		}
		out := a.cli(t, "alloc", "logs", stub.ID, "t").stdout
		return strings.Contains(out, "addr=127.0.0.1:"), out
	})
}
