package server

import (
	"context"
	"fmt"
	"maps"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// NodeUpdateDrain starts or stops a node's drain. Starting one makes the
// node ineligible and hands it to the leader's drainer (drainer.go);
// stopping one leaves the allocations already migrated where they are and,
// with MarkEligible, makes the node eligible again.
func (s *Server) NodeUpdateDrain(ctx context.Context, req *structs.NodeUpdateDrainRequest) (*structs.NodeDrainUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	node, err := s.fsm.State().NodeByID(nil, req.NodeID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", req.NodeID, err)
	}
	if node == nil {
		return nil, structs.NotFound("node", req.NodeID)
	}
	now := s.clock.Now().UTC()
	u := state.NodeDrainUpdate{NodeID: node.ID, SetDrain: true}
	var evals []*structs.Evaluation
	if ds := req.DrainStrategy; ds != nil {
		d := &structs.DrainStrategy{DrainSpec: ds.DrainSpec, StartedAt: now}
		switch {
		case d.Deadline > 0:
			d.ForceDeadline = now.Add(d.Deadline)
		case d.Deadline < 0:
			d.ForceDeadline = now
		}
		if node.DrainStrategy != nil {
			d.StartedAt = node.DrainStrategy.StartedAt // an update of the same drain
		}
		u.DrainStrategy = d
		u.Eligibility = structs.NodeSchedulingIneligible
		u.LastDrain = &structs.DrainMetadata{StartedAt: d.StartedAt, UpdatedAt: now, Status: structs.DrainStatusDraining, Meta: maps.Clone(req.Meta)}
		u.Event = &structs.NodeEvent{Message: structs.NodeEventDrainStarted, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	} else {
		if node.DrainStrategy != nil {
			last := node.LastDrain.Copy()
			if last == nil {
				last = &structs.DrainMetadata{StartedAt: node.DrainStrategy.StartedAt}
			}
			last.UpdatedAt, last.Status = now, structs.DrainStatusCanceled
			if req.Meta != nil {
				last.Meta = maps.Clone(req.Meta)
			}
			u.LastDrain = last
			u.Event = &structs.NodeEvent{Message: structs.NodeEventDrainCanceled, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
		}
		if req.MarkEligible && node.SchedulingEligibility != structs.NodeSchedulingEligible {
			u.Eligibility = structs.NodeSchedulingEligible
			if evals, err = s.nodeEvals(node.ID, now); err != nil {
				return nil, err
			}
		}
	}
	index, _, err := s.raftApply(NodeUpdateDrainRequestType, &NodeDrainCommand{Update: u, Evals: evals})
	if err != nil {
		return nil, err
	}
	return &structs.NodeDrainUpdateResponse{
		NodeModifyIndex: index, EvalIDs: evalIDs(evals), EvalCreateIndex: evalCreateIndex(evals, index),
		WriteMeta: structs.WriteMeta{Index: index},
	}, nil
}

// NodeUpdateEligibility makes a node eligible or ineligible for new
// allocations. A draining node cannot be made eligible: its drain must be
// stopped first.
func (s *Server) NodeUpdateEligibility(ctx context.Context, req *structs.NodeUpdateEligibilityRequest) (*structs.NodeDrainUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	switch req.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return nil, structs.Invalid("eligibility %q is invalid: use %q or %q", req.Eligibility, structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	node, err := s.fsm.State().NodeByID(nil, req.NodeID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", req.NodeID, err)
	}
	if node == nil {
		return nil, structs.NotFound("node", req.NodeID)
	}
	if node.DrainStrategy != nil && req.Eligibility == structs.NodeSchedulingEligible {
		return nil, structs.Invalid("node %q is draining: stop its drain first (drover node drain -disable), which can also make it eligible (-keep-ineligible not given)", node.ID)
	}
	if node.SchedulingEligibility == req.Eligibility {
		idx := max(s.fsm.State().Index(state.TableNodes), 1)
		return &structs.NodeDrainUpdateResponse{NodeModifyIndex: node.ModifyIndex, WriteMeta: structs.WriteMeta{Index: idx}}, nil
	}
	now := s.clock.Now().UTC()
	u := state.NodeDrainUpdate{NodeID: node.ID, Eligibility: req.Eligibility,
		Event: &structs.NodeEvent{Message: structs.NodeEventIneligible, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now}}
	var evals []*structs.Evaluation
	if req.Eligibility == structs.NodeSchedulingEligible {
		u.Event.Message = structs.NodeEventEligible
		if evals, err = s.nodeEvals(node.ID, now); err != nil {
			return nil, err
		}
	}
	index, _, err := s.raftApply(NodeUpdateDrainRequestType, &NodeDrainCommand{Update: u, Evals: evals})
	if err != nil {
		return nil, err
	}
	return &structs.NodeDrainUpdateResponse{
		NodeModifyIndex: index, EvalIDs: evalIDs(evals), EvalCreateIndex: evalCreateIndex(evals, index),
		WriteMeta: structs.WriteMeta{Index: index},
	}, nil
}

// evalCreateIndex is the index the evaluations were created at: index, or
// 0 when there are none.
func evalCreateIndex(evals []*structs.Evaluation, index uint64) uint64 {
	if len(evals) == 0 {
		return 0
	}
	return index
}
