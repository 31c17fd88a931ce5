package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

const sleeperJob = `job "sleeper" {
  type = "service"

  group "g" {
    task "sleep" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 300"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

// jobAlloc returns the job's only allocation, or nil while there is none.
func jobAlloc(t *testing.T, c *api.Client, jobID string) (*api.AllocationListStub, string) {
	allocs, _, err := c.Jobs().Allocations(jobID, true, nil)
	if err != nil {
		return nil, err.Error()
	}
	switch len(allocs) {
	case 0:
		return nil, "no allocation yet"
	case 1:
		return allocs[0], ""
	}
	t.Fatalf("job %q has %d allocations, want 1", jobID, len(allocs))
	return nil, ""
}

// TestRawExecRunStopEvents runs a raw_exec job with the CLI, stops it, and
// checks the task's life as the API and `drover alloc status` tell it.
func TestRawExecRunStopEvents(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)

	r := a.cli(t, "job", "run", "-detach", writeFile(t, "sleeper.nomad.hcl", sleeperJob))
	if r.code != 0 || !strings.Contains(r.stdout, "Evaluation ID: ") {
		t.Fatalf("job run -detach:\n%s", r)
	}

	var alloc *api.AllocationListStub
	waitFor(t, 60*time.Second, "the allocation to run", func() (bool, string) {
		var why string
		alloc, why = jobAlloc(t, c, "sleeper")
		if alloc == nil {
			return false, why
		}
		return alloc.ClientStatus == api.AllocClientStatusRunning, "client status " + alloc.ClientStatus
	})

	if r := a.cli(t, "job", "status", "sleeper"); r.code != 0 || !strings.Contains(r.stdout, alloc.ID[:8]) {
		t.Errorf("job status does not list the allocation:\n%s", r)
	}

	r = a.cli(t, "job", "inspect", "sleeper")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "{\n    \"Job\": {") || !strings.Contains(r.stdout, `"Driver": "raw_exec"`) {
		t.Errorf("job inspect:\n%s", r)
	}
	if r := a.cli(t, "status", alloc.ID[:8]); r.code != 0 || !strings.Contains(r.stdout, `Task "sleep" is "running"`) {
		t.Errorf("status <alloc prefix> does not show the allocation:\n%s", r)
	}

	if r := a.cli(t, "job", "stop", "sleeper"); r.code != 0 {
		t.Fatalf("job stop:\n%s", r)
	}

	var full *api.Allocation
	waitFor(t, 60*time.Second, "the allocation to complete", func() (bool, string) {
		var err error
		full, _, err = c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return full.ClientStatus == api.AllocClientStatusComplete, "client status " + full.ClientStatus
	})

	ts := full.TaskStates["sleep"]
	if ts == nil {
		t.Fatalf("no state for task sleep: %+v", full.TaskStates)
	}
	if ts.State != api.TaskStateDead || ts.Failed {
		t.Errorf("task state %q failed=%v, want dead and not failed", ts.State, ts.Failed)
	}
	want := []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}
	var got []string
	for _, ev := range ts.Events {
		got = append(got, ev.Type)
		if ev.Type == "Terminated" && (ev.ExitCode != 130 || ev.Signal != 2) {
			t.Errorf("Terminated: exit code %d signal %d, want 130 and 2 (SIGINT)", ev.ExitCode, ev.Signal)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("event types (oldest first) = %q, want %q", got, want)
	}

	r = a.cli(t, "alloc", "status", alloc.ID[:8])
	if r.code != 0 {
		t.Fatalf("alloc status:\n%s", r)
	}
	shown := eventTypesShown(t, r.stdout)
	for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
		want[i], want[j] = want[j], want[i]
	}
	if strings.Join(shown, ",") != strings.Join(want, ",") {
		t.Errorf("alloc status shows event types %q, want newest first %q\n%s", shown, want, r.stdout)
	}
	if !regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  Terminated  Exit Code: 130, Signal: 2`).MatchString(r.stdout) {
		t.Errorf("alloc status does not show the Terminated event with its exit code and signal:\n%s", r.stdout)
	}
}

// eventTypesShown reads the Type column of the "Recent Events:" table.
func eventTypesShown(t *testing.T, out string) []string {
	t.Helper()
	_, table, ok := strings.Cut(out, "Recent Events:\n")
	if !ok {
		t.Fatalf("no Recent Events table in:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	header := lines[0]
	typeCol := strings.Index(header, "Type")
	descCol := strings.Index(header, "Description")
	if typeCol < 0 || descCol < 0 {
		t.Fatalf("unexpected header %q", header)
	}
	var types []string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		if len(l) < descCol {
			t.Fatalf("short row %q", l)
		}
		types = append(types, strings.TrimSpace(l[typeCol:descCol]))
	}
	return types
}

// TestRunMalformedJobChangesNothing checks that a job file with a syntax
// error is refused with its position before anything is submitted.
func TestRunMalformedJobChangesNothing(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	bad := writeFile(t, "bad.nomad.hcl", `job "bad" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
    }
  }
`)
	r := a.cli(t, "job", "run", bad)
	if r.code == 0 {
		t.Fatalf("job run of a malformed file succeeded:\n%s", r)
	}
	if !regexp.MustCompile(regexp.QuoteMeta(bad) + `:\d+:\d+`).MatchString(r.stderr) {
		t.Errorf("stderr does not name the position (file:line:col):\n%s", r)
	}
	// A task name that would climb out of the allocation directory is
	// refused at submit time, naming the task and what to do.
	traverse := writeFile(t, "traverse.nomad.hcl", `job "traverse" {
  group "g" {
    task "../../../x" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`)
	if r := a.cli(t, "job", "run", traverse); r.code == 0 || !strings.Contains(r.stderr, `task name "../../../x" contains "/"`) {
		t.Errorf("job run with a task named ../../../x:\n%s", r)
	}
	jobs, _, err := a.client(t).Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("jobs exist after a refused job file: %+v", jobs)
	}
	if r := a.cli(t, "job", "status"); r.code != 0 || r.stdout != "No running jobs\n" {
		t.Errorf("job status:\n%s", r)
	}
	r = a.cli(t, "node", "status")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ID ") || !strings.Contains(r.stdout, "ready") {
		t.Errorf("node status:\n%s", r)
	}
	nodeID := strings.Fields(strings.Split(r.stdout, "\n")[1])[0]
	if r := a.cli(t, "node", "status", nodeID); r.code != 0 || !regexp.MustCompile(`raw_exec +true +true`).MatchString(r.stdout) {
		t.Errorf("node status %s does not show a healthy raw_exec driver:\n%s", nodeID, r)
	}
}
