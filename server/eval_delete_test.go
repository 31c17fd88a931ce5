package server

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func pauseBroker(t *testing.T, s *Server, pause bool) {
	t.Helper()
	cfg, err := s.State().SchedulerConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := structs.SchedulerConfiguration{}
	if cfg != nil {
		c = *cfg
	}
	c.PauseEvalBroker = pause
	if _, err := s.SchedulerSetConfig(context.Background(), &structs.SchedulerSetConfigRequest{Config: c}); err != nil {
		t.Fatal(err)
	}
}

func TestEvalDelete(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	a := registerJob(t, s, testJob("a", 1, 100, 100))
	b := registerJob(t, s, testJob("b", 1, 100, 100))
	c := registerJob(t, s, testJob("c", 1, 100, 100))

	// The broker must be paused.
	_, err := s.EvalDelete(ctx, &structs.EvalDeleteRequest{EvalIDs: []string{a.EvalID}})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "eval broker is enabled") {
		t.Fatalf("delete with the broker running: %v", err)
	}
	pauseBroker(t, s, true)
	for name, req := range map[string]*structs.EvalDeleteRequest{
		"neither":    {},
		"both":       {EvalIDs: []string{a.EvalID}, Filter: `JobID == "a"`},
		"bad filter": {Filter: `JobID ===`},
	} {
		if _, err := s.EvalDelete(ctx, req); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	// An unknown ID deletes nothing, not even the known ones.
	_, err = s.EvalDelete(ctx, &structs.EvalDeleteRequest{EvalIDs: []string{a.EvalID, "8E231CF4-CA48-43FF-B694-5801E69E22FA"}})
	if structs.KindOf(err) != structs.KindNotFound || !strings.Contains(err.Error(), "eval not found") {
		t.Fatalf("delete an unknown eval: %v", err)
	}
	if e, _ := s.State().EvalByID(nil, a.EvalID); e == nil {
		t.Fatal("a failed delete removed an evaluation")
	}

	resp, err := s.EvalDelete(ctx, &structs.EvalDeleteRequest{EvalIDs: []string{a.EvalID}})
	if err != nil || resp.Count != 1 || resp.Index == 0 {
		t.Fatalf("delete by ID = %+v, %v", resp, err)
	}
	resp, err = s.EvalDelete(ctx, &structs.EvalDeleteRequest{Filter: `JobID == "b"`})
	if err != nil || resp.Count != 1 {
		t.Fatalf("delete by filter = %+v, %v", resp, err)
	}
	for id, want := range map[string]bool{a.EvalID: false, b.EvalID: false, c.EvalID: true} {
		if e, _ := s.State().EvalByID(nil, id); (e != nil) != want {
			t.Errorf("eval %s stored %v, want %v", id, e != nil, want)
		}
	}

	// An evaluation whose allocation runs stays.
	job, _ := s.State().JobByID(nil, "default", "c")
	run := planAlloc("c1", "n1", job, 100)
	run.EvalID = c.EvalID
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{run}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EvalDelete(ctx, &structs.EvalDeleteRequest{EvalIDs: []string{c.EvalID}}); structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "still runs") {
		t.Fatalf("delete the eval of a running alloc: %v", err)
	}
}

// TestEvalBrokerPause: while the scheduler configuration pauses the
// broker, no evaluation is handed out; resuming wakes the waiting workers.
func TestEvalBrokerPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newEvalBroker(nil)
		b.SetEnabled(true)
		b.SetPaused(true)
		b.Enqueue(typedEval("s1", "web", structs.JobTypeService, 50))
		got := make(chan string, 1)
		go func() {
			if e, _, err := b.DequeueToken(context.Background(), nil); err == nil {
				got <- e.ID
			}
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("a paused broker handed out an evaluation")
		}
		b.SetPaused(false)
		synctest.Wait()
		if len(got) != 1 || <-got != "s1" {
			t.Fatal("resuming the broker did not hand out the waiting evaluation")
		}
	})
}

// TestSchedulerConfigPausesBroker: PauseEvalBroker in the scheduler
// configuration pauses the leader's broker.
func TestSchedulerConfigPausesBroker(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	pauseBroker(t, s, true)
	s.broker.mu.Lock()
	paused := s.broker.paused
	s.broker.mu.Unlock()
	if !paused {
		t.Fatal("the broker runs with PauseEvalBroker set")
	}
	pauseBroker(t, s, false)
	s.broker.mu.Lock()
	paused = s.broker.paused
	s.broker.mu.Unlock()
	if paused {
		t.Fatal("the broker stays paused with PauseEvalBroker unset")
	}
}
