package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadAPIClient drives the agent with HashiCorp's own Go client: its
// requests must be accepted and its responses must decode.
func TestNomadAPIClient(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}

	job := nomad.NewServiceJob("nomad-client", "nomad-client", "global", 50)
	task := nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/sleep").
		SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))

	resp, _, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if resp.EvalID == "" {
		t.Error("registration returned no evaluation ID")
	}

	var allocID string
	waitFor(t, 60*time.Second, "the allocation to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("nomad-client", false, nil)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != 1 {
			return false, "allocations: " + strconv.Itoa(len(allocs))
		}
		allocID = allocs[0].ID
		return allocs[0].ClientStatus == "running", "client status " + allocs[0].ClientStatus
	})

	alloc, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		t.Fatalf("alloc info: %v", err)
	}
	ts := alloc.TaskStates["t"]
	if ts == nil || ts.State != "running" || ts.StartedAt.IsZero() {
		t.Fatalf("task state: %+v", ts)
	}
	var types []string
	for _, ev := range ts.Events {
		types = append(types, ev.Type)
		if ev.Time == 0 {
			t.Errorf("event %q has no time", ev.Type)
		}
	}
	if strings.Join(types, ",") != "Received,Task Setup,Started" {
		t.Errorf("events of a running task = %q", types)
	}
	if alloc.Job == nil || *alloc.Job.ID != "nomad-client" {
		t.Errorf("allocation's job: %+v", alloc.Job)
	}

	evals, _, err := c.Jobs().Evaluations("nomad-client", nil)
	if err != nil || len(evals) == 0 {
		t.Errorf("evaluations: %v, %d", err, len(evals))
	}
	summary, _, err := c.Jobs().Summary("nomad-client", nil)
	if err != nil || summary.Summary["g"].Running != 1 {
		t.Errorf("summary: %v, %+v", err, summary)
	}

	if _, _, err := c.Jobs().Deregister("nomad-client", true, nil); err != nil {
		t.Fatalf("deregister: %v", err)
	}
	waitFor(t, 60*time.Second, "the purged job to disappear", func() (bool, string) {
		jobs, _, err := c.Jobs().List(nil)
		if err != nil {
			return false, err.Error()
		}
		return len(jobs) == 0, "jobs: " + strconv.Itoa(len(jobs))
	})
}

func pointer[T any](v T) *T { return &v }
