package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
)

// batchTask is a raw_exec task block running script once.
func batchTask(script string) string {
	return fmt.Sprintf(`    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }`, script)
}

// childrenOf lists the jobs launched or dispatched from parent.
func childrenOf(t *testing.T, c *api.Client, parent string) []*api.JobListStub {
	t.Helper()
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: parent + "/"})
	if err != nil {
		t.Fatalf("list children of %s: %v", parent, err)
	}
	var out []*api.JobListStub
	for _, j := range jobs {
		if j.ParentID == parent {
			out = append(out, j)
		}
	}
	return out
}

// waitCompleteWithOutput waits for jobID's only allocation to complete and
// returns its task's output.
func waitCompleteWithOutput(t *testing.T, a *agent, jobID string) string {
	t.Helper()
	c := a.client(t)
	var alloc *api.AllocationListStub
	waitFor(t, 2*time.Minute, jobID+"'s allocation to complete", func() (bool, string) {
		var why string
		alloc, why = jobAlloc(t, c, jobID)
		if alloc == nil {
			return false, why
		}
		if alloc.ClientStatus == api.AllocClientStatusFailed {
			t.Fatalf("%s's allocation failed:\n%s", jobID, a.cli(t, "alloc", "status", alloc.ID))
		}
		return alloc.ClientStatus == api.AllocClientStatusComplete, alloc.ClientStatus
	})
	r := a.cli(t, "alloc", "logs", alloc.ID)
	if r.code != 0 {
		t.Fatalf("alloc logs:\n%s", r)
	}
	return r.stdout
}

// TestPeriodicForceAndMinuteTick registers a periodic job that launches
// every minute: it is not scheduled itself and `job status` shows its next
// launch; `job periodic force` launches a child that runs; then the
// dispatcher launches a child at a real minute tick, named after it.
func TestPeriodicForceAndMinuteTick(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	job := fmt.Sprintf(`job "tick" {
  type = "batch"
  periodic {
    cron = "* * * * *"
  }
  group "g" {
%s
  }
}`, batchTask(`echo "ran $NOMAD_JOB_ID"`))
	if r := a.cli(t, "job", "run", writeFile(t, "tick.nomad.hcl", job)); r.code != 0 || !strings.Contains(r.stdout, "periodic") {
		t.Fatalf("job run of a periodic job (want exit 0 and a word about the periodic launch):\n%s", r)
	}
	r := a.cli(t, "job", "status", "tick")
	if r.code != 0 || !strings.Contains(r.stdout, "Next Periodic Launch") || !regexp.MustCompile(`Status\s+= running`).MatchString(r.stdout) {
		t.Fatalf("job status of the periodic job:\n%s", r)
	}
	if allocs, _, err := c.Jobs().Allocations("tick", true, nil); err != nil || len(allocs) != 0 {
		t.Fatalf("the periodic job itself was placed: %d allocations, %v", len(allocs), err)
	}

	if r := a.cli(t, "job", "periodic", "force", "tick"); r.code != 0 {
		t.Fatalf("job periodic force:\n%s", r)
	}
	forced := childrenOf(t, c, "tick")
	if len(forced) == 0 {
		t.Fatal("job periodic force launched no child")
	}
	if out := waitCompleteWithOutput(t, a, forced[0].ID); !strings.Contains(out, "ran "+forced[0].ID) {
		t.Errorf("forced child's output = %q", out)
	}

	// The next minute tick: a child named after a whole minute.
	var ticked string
	waitFor(t, 75*time.Second, "a child launched at a minute tick", func() (bool, string) {
		kids := childrenOf(t, c, "tick")
		for _, k := range kids {
			sec, err := strconv.ParseInt(strings.TrimPrefix(k.ID, "tick/periodic-"), 10, 64)
			if err == nil && sec%60 == 0 {
				ticked = k.ID
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d children, none at a whole minute", len(kids))
	})
	if out := waitCompleteWithOutput(t, a, ticked); !strings.Contains(out, "ran "+ticked) {
		t.Errorf("ticked child's output = %q", out)
	}
	r = a.cli(t, "job", "status", "tick")
	if !strings.Contains(r.stdout, "Previously Launched Jobs") || !strings.Contains(r.stdout, ticked) {
		t.Errorf("job status does not list the launched child %s:\n%s", ticked, r)
	}
}

// TestDispatchPayloadAndMeta dispatches a parameterized job with a payload
// and meta: the child's task finds the payload in local/ and the meta in
// NOMAD_META_*; a dispatch without the required meta is refused and
// registers nothing.
func TestDispatchPayloadAndMeta(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	job := fmt.Sprintf(`job "transcode" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }
  meta {
    profile = "default"
  }
  group "g" {
%s
  }
}`, batchTask(`echo "input=$NOMAD_META_input profile=$NOMAD_META_profile"; cat local/req/payload.json`))
	job = strings.Replace(job, `driver = "raw_exec"`, `driver = "raw_exec"
      dispatch_payload {
        file = "req/payload.json"
      }`, 1)
	if r := a.cli(t, "job", "run", writeFile(t, "transcode.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	payload := writeFile(t, "payload.json", `{"frames": 42}`)
	r := a.cli(t, "job", "dispatch", "-meta", "input=a.mp4", "transcode", payload)
	if r.code != 0 {
		t.Fatalf("job dispatch:\n%s", r)
	}
	m := regexp.MustCompile(`Dispatched Job ID = (transcode/dispatch-\d+-[0-9a-f]{8})`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("job dispatch printed no dispatched job ID:\n%s", r)
	}
	out := waitCompleteWithOutput(t, a, m[1])
	if !strings.Contains(out, "input=a.mp4 profile=default") || !strings.Contains(out, `{"frames": 42}`) {
		t.Errorf("dispatched task's output = %q, want the meta and the payload", out)
	}

	r = a.cli(t, "job", "dispatch", "-meta", "profile=hd", "transcode", payload)
	if r.code == 0 || !strings.Contains(r.stderr, "missing required meta: input") {
		t.Errorf("dispatch without the required meta:\n%s", r)
	}
	r = a.cli(t, "job", "dispatch", "-meta", "input=x", "-meta", "colour=red", "transcode", payload)
	if r.code == 0 || !strings.Contains(r.stderr, "colour") {
		t.Errorf("dispatch with an undeclared meta key:\n%s", r)
	}
	if kids := childrenOf(t, c, "transcode"); len(kids) != 1 { // before Nomad's client dispatches
		t.Errorf("refused dispatches registered jobs: %d children", len(kids))
	}

	// Nomad's own client dispatches too (its body carries Priority, its
	// idempotency token goes in the query): the same token answers the
	// same child.
	nc, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	wo := &nomad.WriteOptions{IdempotencyToken: "once"}
	first, _, err := nc.Jobs().Dispatch("transcode", map[string]string{"input": "b.mp4"}, []byte("{}"), "nomad", wo)
	if err != nil {
		t.Fatalf("Nomad client dispatch: %v", err)
	}
	if !strings.HasPrefix(first.DispatchedJobID, "transcode/dispatch-nomad-") || first.EvalID == "" {
		t.Errorf("Nomad client dispatch = %+v", first)
	}
	again, _, err := nc.Jobs().Dispatch("transcode", map[string]string{"input": "b.mp4"}, []byte("{}"), "nomad", wo)
	if err != nil || again.DispatchedJobID != first.DispatchedJobID {
		t.Errorf("dispatch with the same idempotency token = %+v, %v; want %s again", again, err, first.DispatchedJobID)
	}
	r = a.cli(t, "job", "status", "transcode")
	if !strings.Contains(r.stdout, "Dispatched Jobs") || !strings.Contains(r.stdout, m[1]) {
		t.Errorf("job status of the parameterized job:\n%s", r)
	}
}

// TestSysbatchTwoClients runs a sysbatch job on a server+client agent and
// a client agent: one allocation per node, each runs to completion and is
// not replaced.
func TestSysbatchTwoClients(t *testing.T) {
	t.Parallel()
	requireTwoAgents(t)
	rawExec := `  options = { "driver.raw_exec.enable" = "1" }`
	a, _, _ := startTwoNodes(t, twoNodes{driver: "raw_exec", clientA: rawExec, clientB: rawExec})
	c := a.client(t)

	job := fmt.Sprintf(`job "inventory" {
  type = "sysbatch"
  group "g" {
%s
  }
}`, batchTask(`echo "inventory of $NOMAD_ALLOC_ID"`))
	if r := a.cli(t, "job", "run", writeFile(t, "inventory.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run of a sysbatch job:\n%s", r)
	}
	waitFor(t, 3*time.Minute, "an allocation complete on each node", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("inventory", true, nil)
		if err != nil {
			return false, err.Error()
		}
		done := map[string]bool{}
		var seen []string
		for _, al := range allocs {
			seen = append(seen, al.NodeName+":"+al.ClientStatus)
			if al.ClientStatus == api.AllocClientStatusFailed {
				t.Fatalf("alloc %s failed: %s", al.ID, a.cli(t, "alloc", "status", al.ID).stdout)
			}
			if al.ClientStatus == api.AllocClientStatusComplete {
				done[al.NodeName] = true
			}
		}
		return len(allocs) == 2 && done["node-a"] && done["node-b"], strings.Join(seen, ", ")
	})
	// Done: the job goes dead and nothing is placed again.
	waitFor(t, time.Minute, "the sysbatch job to be dead", func() (bool, string) {
		j, _, err := c.Jobs().Info("inventory", nil)
		if err != nil {
			return false, err.Error()
		}
		return j.Status != nil && *j.Status == "dead", fmt.Sprint(j.Status)
	})
	if allocs, _, err := c.Jobs().Allocations("inventory", true, nil); err != nil || len(allocs) != 2 {
		t.Errorf("after completion the job has %d allocations (%v), want the 2 completed ones", len(allocs), err)
	}
}
