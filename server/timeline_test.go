package server

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

// TestAllocTimelineServerSteps: the servers record every step of theirs,
// in order, for an allocation a registration placed and its client ran and
// ended.
func TestAllocTimelineServerSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("n1", 4000, 4096))
		r := registerJob(t, s, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		allocs := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(allocs) != 1 {
			t.Fatalf("%d allocs", len(allocs))
		}
		a := allocs[0]
		// The plan's commit completes the evaluation; the applier marks
		// plan_applied just after, concurrently with this test: it has
		// once the server is idle.
		settled(t, "plan_applied to be marked", func() (bool, string) {
			for _, e := range s.timeline.Entries(a.ID) {
				if e.Step == structs.StepPlanApplied {
					return true, ""
				}
			}
			return false, "not yet"
		})
		for _, status := range []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete} {
			if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1",
				Alloc: []*structs.Allocation{{ID: a.ID, ClientStatus: status}}}); err != nil {
				t.Fatal(err)
			}
		}

		resp, err := s.AllocTimeline(ctx, &structs.AllocSpecificRequest{AllocID: a.ID[:8]})
		if err != nil {
			t.Fatal(err)
		}
		if resp.AllocID != a.ID || resp.EvalID != r.EvalID {
			t.Errorf("alloc %s eval %s, want %s and %s", resp.AllocID, resp.EvalID, a.ID, r.EvalID)
		}
		var steps []structs.TimelineStep
		for i, e := range resp.Entries {
			steps = append(steps, e.Step)
			if i > 0 && e.Time < resp.Entries[i-1].Time {
				t.Errorf("%s at %d, before %s at %d", e.Step, e.Time, resp.Entries[i-1].Step, resp.Entries[i-1].Time)
			}
		}
		want := []structs.TimelineStep{structs.StepJobRegistered, structs.StepEvalEnqueued, structs.StepEvalDequeued,
			structs.StepPlanSubmitted, structs.StepPlanApplied, structs.StepRunningApplied, structs.StepEndedApplied}
		if !slices.Equal(steps, want) {
			t.Errorf("steps = %v, want %v", steps, want)
		}

		if _, err := s.AllocTimeline(ctx, &structs.AllocSpecificRequest{AllocID: "ffffffff-none"}); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("unknown alloc: %v, want not found", err)
		}
	})
}
