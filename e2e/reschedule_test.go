package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestRescheduleFailedAllocs runs a service whose task always fails, with
// no restarts and a reschedule policy of 2 attempts, 1s apart: the failed
// alloc is replaced twice, the three allocs are linked by
// PreviousAllocation/NextAllocation and carry their reschedule history,
// and then rescheduling stops.
func TestRescheduleFailedAllocs(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	job := writeFile(t, "flaky.nomad.hcl", `job "flaky" {
  type = "service"

  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    reschedule {
      attempts       = 2
      interval       = "1h"
      delay          = "1s"
      delay_function = "constant"
      unlimited      = false
    }

    task "t" {
      driver = "mock_driver"

      config {
        run_for   = "200ms"
        exit_code = 1
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	if r := a.cli(t, "job", "run", "-detach", job); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	c := a.client(t)

	var allocs []*api.Allocation
	waitFor(t, 90*time.Second, "three failed allocs, the last one not rescheduled", func() (bool, string) {
		stubs, _, err := c.Jobs().Allocations("flaky", true, nil)
		if err != nil {
			return false, err.Error()
		}
		allocs = allocs[:0]
		var states []string
		for _, s := range stubs {
			al, _, err := c.Allocations().Info(s.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			allocs = append(allocs, al)
			states = append(states, fmt.Sprintf("%s:%s next=%q", al.ID[:8], al.ClientStatus, al.NextAllocation))
		}
		if len(allocs) > 3 {
			t.Fatalf("%d allocs, want rescheduling to stop at 3: %s", len(allocs), states)
		}
		if len(allocs) < 3 {
			return false, strings.Join(states, ", ")
		}
		for _, al := range allocs {
			if al.ClientStatus != "failed" {
				return false, strings.Join(states, ", ")
			}
		}
		return true, ""
	})

	// Order the chain from the first alloc (no PreviousAllocation).
	byID := map[string]*api.Allocation{}
	var first *api.Allocation
	for _, al := range allocs {
		byID[al.ID] = al
		if al.PreviousAllocation == "" {
			first = al
		}
	}
	if first == nil {
		t.Fatalf("no alloc without PreviousAllocation")
	}
	chain := []*api.Allocation{first}
	for len(chain) < 3 {
		next := byID[chain[len(chain)-1].NextAllocation]
		if next == nil {
			t.Fatalf("alloc %s: NextAllocation %q is not one of the job's allocs", chain[len(chain)-1].ID, chain[len(chain)-1].NextAllocation)
		}
		if next.PreviousAllocation != chain[len(chain)-1].ID {
			t.Fatalf("alloc %s: PreviousAllocation %q, want %s", next.ID, next.PreviousAllocation, chain[len(chain)-1].ID)
		}
		chain = append(chain, next)
	}
	for i, al := range chain {
		var events []*api.RescheduleEvent
		if al.RescheduleTracker != nil {
			events = al.RescheduleTracker.Events
		}
		if len(events) != i {
			t.Fatalf("alloc %d (%s): %d reschedule events, want %d", i, al.ID, len(events), i)
		}
		for j, e := range events {
			if e.PrevAllocID != chain[j].ID || e.PrevNodeID != chain[j].NodeID || e.Delay != time.Second || e.RescheduleTime == 0 {
				t.Errorf("alloc %d event %d = %+v, want prev %s delay 1s", i, j, e, chain[j].ID)
			}
		}
	}
	last := chain[2]
	if last.NextAllocation != "" || last.FollowupEvalID != "" {
		t.Fatalf("last alloc: next=%q followup=%q, want attempts exhausted", last.NextAllocation, last.FollowupEvalID)
	}
	// Every evaluation has run: nothing is left to reschedule.
	waitFor(t, 30*time.Second, "the job's evaluations to finish", func() (bool, string) {
		evals, _, err := c.Jobs().Evaluations("flaky", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.Status == "pending" {
				return false, "eval " + e.ID + " (" + e.TriggeredBy + ") pending"
			}
		}
		return true, ""
	})
	if stubs, _, err := c.Jobs().Allocations("flaky", true, nil); err != nil || len(stubs) != 3 {
		t.Fatalf("allocs = %d (%v), want 3", len(stubs), err)
	}

	st := a.cli(t, "alloc", "status", last.ID)
	for _, want := range []string{"Reschedule Attempts  = 2/2", "Rescheduled Alloc ID = " + chain[1].ID[:8]} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("alloc status lacks %q:\n%s", want, st)
		}
	}
}
