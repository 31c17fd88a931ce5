package client

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

// TestClientTimelineSteps: the node records its steps of an allocation's
// way to running and of its stop, in order.
func TestClientTimelineSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, false)
		c, srv := tc.c, tc.srv
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		alloc := testJobAlloc(c.NodeID(), map[string]any{"run_for": "1h"})
		srv.putAlloc(alloc)
		srv.wait(t, "alloc running on the server", func() bool {
			return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning
		})
		srv.stopAlloc(alloc.ID)
		srv.wait(t, "alloc ended on the server", func() bool {
			return srv.alloc(alloc.ID).ClientTerminalStatus()
		})
		entries := c.AllocTimeline(alloc.ID)
		var steps []structs.TimelineStep
		for i, e := range entries {
			steps = append(steps, e.Step)
			if i > 0 && e.Time < entries[i-1].Time {
				t.Errorf("%s at %d, before %s at %d", e.Step, e.Time, entries[i-1].Step, entries[i-1].Time)
			}
		}
		want := []structs.TimelineStep{structs.StepAllocReceived, structs.StepRunnerStarted, structs.StepHooksDone,
			structs.StepDriverStart, structs.StepTaskRunning, structs.StepStatusSent, structs.StepStopReceived, structs.StepEnded}
		if !slices.Equal(steps, want) {
			t.Errorf("steps = %v, want %v", steps, want)
		}
		if got := c.AllocTimeline("unknown"); got != nil {
			t.Errorf("timeline of an unknown alloc = %v", got)
		}
		if err := c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}
