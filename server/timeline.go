package server

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/timeline"
)

// The servers' steps of an allocation's timeline (structs.TimelineStep)
// are marked where they happen: job_registered in JobRegister (the time
// the request arrived, under the evaluation's ID), eval_enqueued and
// eval_dequeued by the broker, plan_submitted by the worker (by
// evaluation ID); plan_applied (by allocation ID) once the plan placing
// the allocation is committed, and running_applied and ended_applied once
// a client's update saying it runs, or ended, is. Each is one call on s.timeline, in memory.

// markPlaced records that the plan placing allocs was committed at t.
func (s *Server) markPlaced(allocs []*structs.Allocation, t time.Time) {
	for _, a := range allocs {
		s.timeline.MarkAt(a.ID, structs.StepPlanApplied, t)
	}
}

// markClientApplied records, for the committed client updates saying an
// allocation runs or ended, that the servers applied them at t.
func (s *Server) markClientApplied(updates []*structs.Allocation, t time.Time) {
	for _, u := range updates {
		switch {
		case u.ClientStatus == structs.AllocClientStatusRunning:
			s.timeline.MarkAt(u.ID, structs.StepRunningApplied, t)
		case u.ClientTerminalStatus():
			s.timeline.MarkAt(u.ID, structs.StepEndedApplied, t)
		}
	}
}

// AllocTimeline returns the servers' part of an allocation's timeline (by
// ID or unique ID prefix): the steps of the evaluation that placed it and
// of its placement, as this server recorded them (a server that was not
// the leader then, or restarted since, has fewer or none).
func (s *Server) AllocTimeline(ctx context.Context, req *structs.AllocSpecificRequest) (*structs.AllocTimelineResponse, error) {
	resp := &structs.AllocTimelineResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableAllocs)
		a, err := lookupAlloc(ws, st, req.AllocID)
		if err != nil {
			return index, err
		}
		resp.AllocID, resp.EvalID = a.ID, a.EvalID
		resp.Entries = timeline.Merge(s.timeline.Entries(a.EvalID), s.timeline.Entries(a.ID))
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
