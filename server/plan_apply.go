package server

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// pendingPlan is a plan submitted to the plan applier with the evaluation
// updates to commit along with it when it is accepted whole.
type pendingPlan struct {
	plan  *scheduler.Plan
	evals []*structs.Evaluation
	// statusChange marks a deployment status change (fail, pause, resume,
	// progress deadline) committed as given; a scheduler's plan instead
	// keeps the status such a change committed since its snapshot.
	statusChange bool
	respCh       chan planResult // buffered: the applier never blocks on it
}

// planResult tells the worker what was committed.
type planResult struct {
	// Index is the raft index of the commit, 0 when nothing was written.
	Index uint64
	// Rejected is true when some placements did not fit the latest state:
	// the accepted part was committed without the evaluation updates and
	// the worker must schedule again on a fresher snapshot.
	Rejected bool
	// RefreshIndex, set when Rejected, is the index of the state the plan
	// was checked against: the worker must schedule again on state at
	// least this new, or it meets the same conflict again. A follower's
	// worker needs it even when nothing was committed (Index 0): its own
	// state may not yet hold the plans that took the room.
	RefreshIndex uint64
	// Placed counts the placements committed: a rejected plan that
	// placed some made progress (processEval does not count it against
	// maxPlanAttempts).
	Placed int
	Err    error
}

// submitPlan hands a plan to the plan applier and waits for its result.
// ctx bounds the wait for the applier to take the plan; once taken, the
// plan may already be committing, so its result is awaited whatever ctx
// says (the applier answers every plan it takes, promptly).
func (s *Server) submitPlan(ctx context.Context, p *pendingPlan) planResult {
	defer s.config.Timers.MeasureSince(timerPlanSubmit, time.Now())
	p.respCh = make(chan planResult, 1)
	s.planWaiting.Add(1) // metrics.go: the plan queue's depth
	select {
	case s.planQueue <- p:
		s.planWaiting.Add(-1)
	case <-ctx.Done():
		s.planWaiting.Add(-1)
		return planResult{Err: context.Cause(ctx)}
	}
	return <-p.respCh
}

// runPlanApplier applies submitted plans one at a time, so that each is
// checked against the state every earlier plan produced.
func (s *Server) runPlanApplier() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case p := <-s.planQueue:
			p.respCh <- s.applyPlan(p)
		}
	}
}

// applyPlan re-checks each node's placements against the latest state,
// drops the nodes that no longer fit, and commits the rest.
func (s *Server) applyPlan(p *pendingPlan) planResult {
	evalStart := time.Now()
	st := s.fsm.State().Snapshot()
	refresh := st.LatestIndex()
	plan := p.plan
	var allocs []*structs.Allocation
	allocs = append(allocs, plan.Stops()...)
	rejected := false
	var preempted, placed []*structs.Allocation
	accepted := map[string]bool{}
	for nodeID, onNode := range plan.NodeAllocation {
		ok, err := s.nodeFits(st, nodeID, plan)
		if err != nil {
			return planResult{Err: err}
		}
		if !ok {
			rejected = true
			s.logger.Debug("plan rejected on node: capacity changed", "node_id", nodeID, "eval_id", plan.EvalID)
			continue
		}
		allocs = append(allocs, onNode...)
		placed = append(placed, onNode...)
		for _, a := range onNode {
			accepted[a.ID] = true
		}
		// Evictions are committed only with the placements that need them.
		preempted = append(preempted, plan.NodePreemptions[nodeID]...)
	}
	allocs = append(allocs, preempted...)
	allocs = append(allocs, rescheduleUpdates(plan, accepted, rejected)...) // reschedule.go
	deployments := plan.Deployments
	if !p.statusChange {
		var err error
		if deployments, err = keepDeploymentStatus(st, deployments); err != nil {
			return planResult{Err: err}
		}
	}
	cmd := &PlanResultCommand{Allocs: allocs, Deployments: deployments}
	if !rejected {
		cmd.Evals = p.evals
	}
	cmd.Evals = append(cmd.Evals, s.preemptionEvals(st, preempted)...)
	res := planResult{Rejected: rejected, Placed: len(placed)}
	if rejected {
		res.RefreshIndex = refresh
	}
	if len(cmd.Allocs) == 0 && len(cmd.Evals) == 0 && len(cmd.Deployments) == 0 {
		return res
	}
	s.config.Timers.MeasureSince(timerPlanEvaluate, evalStart)
	applyStart := time.Now()
	index, _, err := s.raftApply(ApplyPlanResultsRequestType, cmd)
	s.config.Timers.MeasureSince(timerPlanApply, applyStart)
	if err != nil {
		return planResult{Err: fmt.Errorf("commit plan of eval %q: %w", plan.EvalID, err)}
	}
	s.markPlaced(placed, s.clock.Now())
	res.Index = index
	return res
}

// nodeFits reports whether the plan's placements on a node still hold
// against the latest state: the node is ready, every allocation the plan
// updates in place is still wanted (another worker's plan may have
// stopped or preempted it since this plan's snapshot), and the placements
// fit with what the node holds now: capacity, device instances and host
// ports (no port given twice on one address).
func (s *Server) nodeFits(st *state.StateSnapshot, nodeID string, plan *scheduler.Plan) (bool, error) {
	node, err := st.NodeByID(nil, nodeID)
	if err != nil {
		return false, fmt.Errorf("read node %q: %w", nodeID, err)
	}
	if node == nil || !node.Ready() {
		return false, nil
	}
	for _, a := range plan.NodeAllocation[nodeID] {
		cur, err := st.AllocByID(nil, a.ID)
		if err != nil {
			return false, fmt.Errorf("read alloc %q: %w", a.ID, err)
		}
		if cur != nil && cur.ServerTerminalStatus() {
			s.logger.Debug("plan updates an alloc stopped since its snapshot", "alloc_id", a.ID, "eval_id", plan.EvalID)
			return false, nil
		}
	}
	existing, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		return false, fmt.Errorf("read allocs of node %q: %w", nodeID, err)
	}
	stopped := map[string]bool{} // or replaced by an in-place update
	for _, a := range plan.NodeUpdate[nodeID] {
		stopped[a.ID] = true
	}
	for _, a := range plan.NodeAllocation[nodeID] {
		stopped[a.ID] = true
	}
	for _, a := range plan.NodePreemptions[nodeID] {
		stopped[a.ID] = true
	}
	var proposed []*structs.Allocation
	for _, a := range existing {
		if !a.TerminalStatus() && !stopped[a.ID] {
			proposed = append(proposed, a)
		}
	}
	proposed = append(proposed, plan.NodeAllocation[nodeID]...)
	fit, _, _ := scheduler.AllocsFit(node, proposed)
	if fit {
		fit, _ = scheduler.DevicesFit(proposed)
	}
	if fit {
		var reason string
		if fit, reason = scheduler.PortsFit(proposed); !fit {
			s.logger.Debug("plan gives a port twice", "node_id", nodeID, "eval_id", plan.EvalID, "reason", reason)
		}
	}
	return fit, nil
}

// preemptionEvals returns one evaluation per job that lost allocations to
// preemption, so that its scheduler replaces them where they fit (or
// blocks until they do).
func (s *Server) preemptionEvals(st *state.StateSnapshot, preempted []*structs.Allocation) []*structs.Evaluation {
	now := s.clock.Now().UnixNano()
	seen := map[structs.NamespacedID]bool{}
	var out []*structs.Evaluation
	for _, a := range preempted {
		key := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
		if seen[key] {
			continue
		}
		seen[key] = true
		job, err := st.JobByID(nil, a.Namespace, a.JobID)
		if err != nil || job == nil {
			continue
		}
		out = append(out, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      a.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerPreemption,
			JobID:          a.JobID,
			JobModifyIndex: job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		})
	}
	return out
}
