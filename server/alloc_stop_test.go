package server

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func TestAllocStopReplaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("node-1", 4000, 4096))
		r := registerJob(t, s, testJob("web", 2, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		before := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(before) != 2 {
			t.Fatalf("%d allocs running", len(before))
		}
		victim := before[0]

		resp, err := s.AllocStop(context.Background(), &structs.AllocStopRequest{AllocID: victim.ID})
		if err != nil {
			t.Fatal(err)
		}
		if resp.EvalID == "" || resp.Index == 0 {
			t.Fatalf("response = %+v", resp)
		}
		eval := waitEvalStatus(t, s, resp.EvalID, structs.EvalStatusComplete)
		if eval.TriggeredBy != structs.EvalTriggerAllocStop || eval.JobID != "web" || eval.Type != structs.JobTypeService {
			t.Errorf("eval = %+v", eval)
		}
		stopped, err := s.State().AllocByID(nil, victim.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stopped.DesiredStatus != structs.AllocDesiredStatusStop || stopped.DesiredDescription != allocStopDesc ||
			stopped.AllocModifyIndex <= victim.AllocModifyIndex {
			t.Errorf("stopped alloc: desired %q (%q), alloc modify index %d -> %d",
				stopped.DesiredStatus, stopped.DesiredDescription, victim.AllocModifyIndex, stopped.AllocModifyIndex)
		}
		after := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(after) != 2 {
			t.Fatalf("%d allocs running after the stop, want 2 (a replacement)", len(after))
		}
		for _, a := range after {
			if a.ID == victim.ID {
				t.Errorf("stopped alloc still desired running")
			}
		}

		// Stopping it again only evaluates the job.
		again, err := s.AllocStop(context.Background(), &structs.AllocStopRequest{AllocID: victim.ID})
		if err != nil {
			t.Fatal(err)
		}
		waitEvalStatus(t, s, again.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusRun)); n != 2 {
			t.Errorf("%d allocs running after a second stop", n)
		}
	})
}

func TestAllocStopErrors(t *testing.T) {
	s := newTestServer(t, nil)
	tests := []struct {
		name string
		req  *structs.AllocStopRequest
		kind structs.ErrorKind
	}{
		{"nil", nil, structs.KindInvalid},
		{"no ID", &structs.AllocStopRequest{}, structs.KindInvalid},
		{"unknown", &structs.AllocStopRequest{AllocID: "nope"}, structs.KindNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.AllocStop(context.Background(), tt.req); structs.KindOf(err) != tt.kind {
				t.Errorf("AllocStop = %v, want kind %v", err, tt.kind)
			}
		})
	}
}

// TestAllocStopDesiredTransition checks that alloc stop's reschedule and
// no_shutdown_delay are recorded on the stopped allocation, as Nomad's API
// shows them (DesiredTransition).
func TestAllocStopDesiredTransition(t *testing.T) {
	tests := []struct {
		name                string
		req                 structs.AllocStopRequest
		reschedule, noDelay bool
	}{
		{"plain", structs.AllocStopRequest{}, false, false},
		{"reschedule", structs.AllocStopRequest{Reschedule: true}, true, false},
		{"no shutdown delay", structs.AllocStopRequest{NoShutdownDelay: true}, false, true},
	}
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("node-1", 4000, 4096))
	r := registerJob(t, s, testJob("web", len(tests), 100, 100))
	waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
	running := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.AllocID = running[i].ID
			if _, err := s.AllocStop(context.Background(), &req); err != nil {
				t.Fatal(err)
			}
			got, err := s.State().AllocByID(nil, req.AllocID)
			if err != nil {
				t.Fatal(err)
			}
			if got.DesiredTransition.ShouldReschedule() != tc.reschedule || got.DesiredTransition.ShouldIgnoreShutdownDelay() != tc.noDelay {
				t.Errorf("desired transition %+v: want reschedule %t, no shutdown delay %t", got.DesiredTransition, tc.reschedule, tc.noDelay)
			}
		})
	}
}
