package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// stickyLocalJob is a sticky job whose task writes, on first start, the
// ID of its alloc into alloc/data/marker; version changes the command
// line, which replaces the alloc (a destructive update).
func stickyLocalJob(version string) string {
	return fmt.Sprintf(`job "sticky-local" {
  type = "service"

  group "g" {
    ephemeral_disk {
      sticky  = true
      migrate = true
      size    = 50
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "[ -f \"$NOMAD_ALLOC_DIR/data/marker\" ] || echo \"$NOMAD_ALLOC_ID\" > \"$NOMAD_ALLOC_DIR/data/marker\"; exec sleep 300 # %s"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, version)
}

// catFile reads a file of an allocation through the agent's fs API.
func (a *agent) catFile(t *testing.T, allocID, path string) (string, error) {
	t.Helper()
	resp, err := http.Get(a.addr + "/v1/client/fs/cat/" + allocID + "?path=" + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), nil
}

// runningAlloc waits for an alloc of the job, other than those in skip,
// to run, and returns it.
func runningAlloc(t *testing.T, c *api.Client, jobID string, skip ...string) *api.Allocation {
	t.Helper()
	var id string
	waitFor(t, 90*time.Second, "a new alloc of "+jobID+" running", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			return false, err.Error()
		}
		var seen []string
	next:
		for _, al := range allocs {
			for _, s := range skip {
				if al.ID == s {
					continue next
				}
			}
			seen = append(seen, al.ID[:8]+":"+al.ClientStatus+":"+al.ClientDescription)
			if al.ClientStatus == api.AllocClientStatusRunning {
				id = al.ID
				return true, ""
			}
		}
		return false, strings.Join(seen, ", ")
	})
	a, _, err := c.Allocations().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// firstActiveEvent is the time of a task's first event after Received.
func firstActiveEvent(ts *api.TaskState) time.Time {
	for _, e := range ts.Events {
		if e.Type != "Received" {
			return time.Unix(0, e.Time)
		}
	}
	return time.Time{}
}

func lastEventTime(ts *api.TaskState) time.Time {
	if len(ts.Events) == 0 {
		return time.Time{}
	}
	return time.Unix(0, ts.Events[len(ts.Events)-1].Time)
}

// TestStickyReplacementMovesDataLocally updates a sticky job so that its
// alloc is replaced on the same node: the replacement starts only after
// the first alloc's task has stopped, and finds the data it wrote.
func TestStickyReplacementMovesDataLocally(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v1.nomad.hcl", stickyLocalJob("v1"))); r.code != 0 {
		t.Fatalf("job run v1:\n%s", r)
	}
	first := runningAlloc(t, c, "sticky-local")
	waitFor(t, 30*time.Second, "the marker", func() (bool, string) {
		got, err := a.catFile(t, first.ID, "alloc/data/marker")
		if err != nil {
			return false, err.Error()
		}
		return strings.TrimSpace(got) == first.ID, "marker = " + got
	})

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v2.nomad.hcl", stickyLocalJob("v2"))); r.code != 0 {
		t.Fatalf("job run v2:\n%s", r)
	}
	second := runningAlloc(t, c, "sticky-local", first.ID)
	if second.PreviousAllocation != first.ID {
		t.Errorf("PreviousAllocation = %q, want %q", second.PreviousAllocation, first.ID)
	}
	got, err := a.catFile(t, second.ID, "alloc/data/marker")
	if err != nil || strings.TrimSpace(got) != first.ID {
		t.Errorf("replacement's marker = %q, %v; want the first alloc's ID %s", got, err, first.ID)
	}
	old, _, err := c.Allocations().Info(first.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if started, ended := firstActiveEvent(second.TaskStates["t"]), lastEventTime(old.TaskStates["t"]); started.Before(ended) {
		t.Errorf("replacement's task began at %v, before the first alloc's last event at %v", started, ended)
	}
}

func preemptJob(id string, priority, count int, memoryMB int64) string {
	return fmt.Sprintf(`job %q {
  type     = "service"
  priority = %d

  group "g" {
    count = %d

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 300"]
      }

      resources {
        cpu    = 20
        memory = %d
      }
    }
  }
}
`, id, priority, count, memoryMB)
}

// TestPreemptionStartsAfterVictimsTerminate fills the node with a
// low-priority job, then runs a high-priority one that fits only by
// preempting: the new alloc's task begins only after every preempted
// alloc's task has ended (compared by event timestamps).
func TestPreemptionStartsAfterVictimsTerminate(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes = %v, %v", nodes, err)
	}
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := node.NodeResources.Memory.MemoryMB
	if node.ReservedResources != nil {
		mem -= int64(node.ReservedResources.Memory.MemoryMB)
	}
	req, err := http.NewRequest(http.MethodPut, a.addr+"/v1/operator/scheduler/configuration",
		strings.NewReader(`{"SchedulerAlgorithm": "binpack", "PreemptionConfig": {"SystemSchedulerEnabled": true, "ServiceSchedulerEnabled": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("enable preemption: %s %s", resp.Status, body)
	}

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "low.nomad.hcl", preemptJob("low", 20, 3, mem*30/100))); r.code != 0 {
		t.Fatalf("job run low:\n%s", r)
	}
	waitFor(t, 90*time.Second, "3 low allocs running", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("low", false, nil)
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, al := range allocs {
			if al.ClientStatus == api.AllocClientStatusRunning {
				n++
			}
		}
		return n == 3, fmt.Sprintf("%d running", n)
	})

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "high.nomad.hcl", preemptJob("high", 90, 1, mem*50/100))); r.code != 0 {
		t.Fatalf("job run high:\n%s", r)
	}
	high := runningAlloc(t, c, "high")
	if len(high.PreemptedAllocations) == 0 {
		t.Fatal("the high-priority alloc preempted nothing")
	}
	started := firstActiveEvent(high.TaskStates["t"])
	for _, id := range high.PreemptedAllocations {
		v, _, err := c.Allocations().Info(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v.DesiredStatus != "evict" || v.PreemptedByAllocation != high.ID {
			t.Errorf("preempted alloc %s: desired %s, preempted by %q", id, v.DesiredStatus, v.PreemptedByAllocation)
		}
		ts := v.TaskStates["t"]
		if ts == nil || ts.State != "dead" {
			t.Errorf("preempted alloc %s's task is not dead: %+v", id, ts)
			continue
		}
		if ended := lastEventTime(ts); started.Before(ended) {
			t.Errorf("high task began at %v, before preempted alloc %s's last event at %v", started, id, ended)
		}
	}
}
