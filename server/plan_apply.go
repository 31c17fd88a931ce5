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
	submitted    time.Time       // when submitPlan queued it
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
	p.submitted = time.Now()
	defer s.config.Timers.MeasureSince(timerPlanSubmit, p.submitted)
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

// checkedPlan is a plan checked against the state plus the plans ahead of
// it: what of it to commit, and its result but for the commit index.
type checkedPlan struct {
	p      *pendingPlan
	cmd    PlanResultCommand // its part of its batch's raft entry
	placed []*structs.Allocation
	res    planResult
}

// writes reports whether the plan has anything to commit.
func (c *checkedPlan) writes() bool {
	return len(c.cmd.Allocs) != 0 || len(c.cmd.Evals) != 0 || len(c.cmd.Deployments) != 0
}

// checkPlan re-checks each node's placements against view (the latest
// state, with the plans ahead of this one laid over it), drops the nodes
// that no longer fit, and returns what to commit of the rest.
func (s *Server) checkPlan(view *planView, p *pendingPlan) *checkedPlan {
	defer s.config.Timers.MeasureSince(timerPlanEvaluate, time.Now())
	plan := p.plan
	out := &checkedPlan{p: p}
	var allocs []*structs.Allocation
	allocs = append(allocs, plan.Stops()...)
	rejected := false
	var preempted, placed []*structs.Allocation
	accepted := map[string]bool{}
	for nodeID, onNode := range plan.NodeAllocation {
		ok, err := s.nodeFits(view, nodeID, plan)
		if err != nil {
			out.res = planResult{Err: err}
			return out
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
		if deployments, err = keepDeploymentStatus(view, deployments); err != nil {
			out.res = planResult{Err: err}
			return out
		}
	}
	out.cmd = PlanResultCommand{Allocs: allocs, Deployments: deployments}
	if !rejected {
		out.cmd.Evals = p.evals
	}
	out.cmd.Evals = append(out.cmd.Evals, s.preemptionEvals(view.st, preempted)...)
	out.placed = placed
	out.res = planResult{Rejected: rejected, Placed: len(placed)}
	return out
}

// nodeFits reports whether the plan's placements on a node still hold
// against the latest state: the node is ready, every allocation the plan
// updates in place is still wanted (another worker's plan may have
// stopped or preempted it since this plan's snapshot), and the placements
// fit with what the node holds now: capacity, device instances and host
// ports (no port given twice on one address).
func (s *Server) nodeFits(st *planView, nodeID string, plan *scheduler.Plan) (bool, error) {
	node, err := st.st.NodeByID(nil, nodeID)
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
