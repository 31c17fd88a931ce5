package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// reportFailed tells the server, as node's client, that a failed at the
// clock's current time.
func reportFailed(t *testing.T, s *Server, clock *fakeClock, a *structs.Allocation) {
	t.Helper()
	if _, err := s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: a.NodeID, SecretID: "secret-" + a.NodeID,
		Alloc: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusFailed,
			TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead, Failed: true, FinishedAt: clock.Now()}}}}}); err != nil {
		t.Fatal(err)
	}
}

// evalsBy returns the job's evaluations triggered by trigger.
func evalsBy(t *testing.T, s *Server, jobID, trigger string) []*structs.Evaluation {
	t.Helper()
	all, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		t.Fatal(err)
	}
	var out []*structs.Evaluation
	for _, e := range all {
		if e.TriggeredBy == trigger {
			out = append(out, e)
		}
	}
	return out
}

func TestRescheduleFailedAllocAfterDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1700000000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		registerNode(t, s, testNode("n2", 4000, 4096))
		job := testJob("web", 1, 100, 100)
		job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
			Delay: 30 * time.Second, DelayFunction: structs.DelayFunctionConstant, Unlimited: true}
		registerJob(t, s, job)
		jobIdle(t, s, "web")
		first := running(t, s, "web")
		if len(first) != 1 {
			t.Fatalf("allocs = %d, want 1", len(first))
		}
		failedAt := clock.Now()
		reportFailed(t, s, clock, first[0])

		// The failure evaluation runs at once and leaves a delayed follow-up.
		var followup *structs.Evaluation
		waitState(t, s, "follow-up eval recorded on the failed alloc", func(ws memdb.WatchSet) (bool, string) {
			a, err := s.State().AllocByID(ws, first[0].ID)
			if err != nil || a == nil {
				return false, fmt.Sprint(err)
			}
			if a.FollowupEvalID == "" {
				return false, "no FollowupEvalID yet"
			}
			followup, err = s.State().EvalByID(ws, a.FollowupEvalID)
			return err == nil && followup != nil, fmt.Sprint(err)
		})
		if n := len(evalsBy(t, s, "web", structs.EvalTriggerAllocFailure)); n != 2 {
			t.Fatalf("alloc-failure evals = %d, want the failure's and its follow-up", n)
		}
		if !followup.WaitUntil.Equal(failedAt.Add(30*time.Second)) || followup.Status != structs.EvalStatusPending {
			t.Fatalf("follow-up = %+v, want pending until failure + 30s", followup)
		}
		settled(t, "follow-up held by the broker", func() (bool, string) {
			st := s.broker.Stats()
			return st.Delayed == 1 && st.InFlight == 0, fmt.Sprintf("%+v", st)
		})

		clock.Step(29 * time.Second)
		if st := s.broker.Stats(); st.Delayed != 1 {
			t.Fatalf("broker = %+v: follow-up released early", st)
		}
		if n := len(allocsOf(t, s, "web", "")); n != 1 {
			t.Fatalf("allocs = %d before the delay passed", n)
		}

		clock.Step(time.Second)
		waitEvalStatus(t, s, followup.ID, structs.EvalStatusComplete)
		all := allocsOf(t, s, "web", "")
		if len(all) != 2 {
			t.Fatalf("allocs = %d, want the failed one and its replacement", len(all))
		}
		var old, repl *structs.Allocation
		for _, a := range all {
			if a.ID == first[0].ID {
				old = a
			} else {
				repl = a
			}
		}
		if old.ClientStatus != structs.AllocClientStatusFailed || old.DesiredStatus != structs.AllocDesiredStatusRun || old.NextAllocation != repl.ID {
			t.Fatalf("old alloc = %s/%s next=%q, want failed/run next=%s", old.ClientStatus, old.DesiredStatus, old.NextAllocation, repl.ID)
		}
		if repl.PreviousAllocation != old.ID || repl.NodeID == old.NodeID {
			t.Fatalf("replacement prev=%q node=%s, want prev=%s on the other node", repl.PreviousAllocation, repl.NodeID, old.ID)
		}
		tr := repl.RescheduleTracker
		if tr == nil || len(tr.Events) != 1 || tr.Events[0].PrevAllocID != old.ID || tr.Events[0].PrevNodeID != old.NodeID ||
			tr.Events[0].Delay != 30*time.Second || tr.Events[0].RescheduleTime != clock.Now().UnixNano() {
			t.Fatalf("tracker = %+v", tr)
		}
	})
}

func TestRescheduleNoEvalForCompletedBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1700000000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("b", 1, 100, 100)
		job.Type = structs.JobTypeBatch
		registerJob(t, s, job)
		jobIdle(t, s, "b")
		a := running(t, s, "b")[0]
		if _, err := s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1",
			Alloc: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}}}); err != nil {
			t.Fatal(err)
		}
		if n := len(evalsBy(t, s, "b", structs.EvalTriggerAllocFailure)); n != 0 {
			t.Fatalf("alloc-failure evals = %d for a completed batch alloc", n)
		}
	})
}

// TestForceRescheduleIgnoresTheDelay checks `job eval -force-reschedule`: a
// failed allocation waiting for its reschedule delay (an hour) is
// replaced at once, with no attempt left in its policy either.
func TestForceRescheduleIgnoresTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1700000000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("web", 1, 100, 100)
		job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
			Delay: time.Hour, DelayFunction: structs.DelayFunctionConstant, Unlimited: true}
		registerJob(t, s, job)
		jobIdle(t, s, "web")
		first := running(t, s, "web")
		if len(first) != 1 {
			t.Fatalf("allocs = %d, want 1", len(first))
		}
		reportFailed(t, s, clock, first[0])
		waitState(t, s, "follow-up eval recorded on the failed alloc", func(ws memdb.WatchSet) (bool, string) {
			a, err := s.State().AllocByID(ws, first[0].ID)
			return err == nil && a != nil && a.FollowupEvalID != "", fmt.Sprint(err)
		})
		if _, err := s.JobEvaluate(context.Background(), &structs.JobEvaluateRequest{JobID: "web", ForceReschedule: true}); err != nil {
			t.Fatal(err)
		}
		waitState(t, s, "the failed alloc replaced without waiting an hour", func(ws memdb.WatchSet) (bool, string) {
			a, err := s.State().AllocByID(ws, first[0].ID)
			if err != nil || a == nil {
				return false, fmt.Sprint(err)
			}
			return a.NextAllocation != "", "no replacement yet"
		})
		if got := clock.Now(); !got.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("the clock moved to %v", got)
		}
	})
}
