package server

import (
	"fmt"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// maxPlanAttempts bounds how often an evaluation is rescheduled after the
// plan applier rejected part of its plan.
const maxPlanAttempts = 5

const descBlocked = "created to place remaining allocations"

// runWorker processes evaluations from the broker until the server stops.
func (s *Server) runWorker(id int) {
	logger := s.logger.With("worker", id)
	for {
		eval, err := s.broker.Dequeue(s.ctx)
		if err != nil {
			return
		}
		if err := s.processEval(eval); err != nil && s.ctx.Err() == nil {
			logger.Error("process evaluation", "eval_id", eval.ID, "job_id", eval.JobID, "error", err)
			s.failEval(eval, err)
		}
		s.broker.Ack(eval.ID)
	}
}

// processEval schedules an evaluation and commits the plan, scheduling
// again on fresher state when the plan applier rejects part of it.
func (s *Server) processEval(eval *structs.Evaluation) error {
	for attempt := 1; ; attempt++ {
		snap := s.fsm.State().Snapshot()
		cur, err := snap.EvalByID(nil, eval.ID)
		if err != nil {
			return fmt.Errorf("read eval: %w", err)
		}
		if cur == nil || cur.TerminalStatus() {
			return nil // cancelled or already processed
		}
		snapIndex := snap.LatestIndex()
		plan, err := scheduler.Options{Now: s.clock.Now}.Process(schedState{snap: snap}, cur)
		if err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		evals, err := s.evalOutcome(snap, cur, plan, snapIndex)
		if err != nil {
			return err
		}
		evals = append(evals, plan.FollowupEvals...)
		failed, target, err := revertTarget(snap, plan)
		if err != nil {
			return err
		}
		if target != nil && plan.Job != nil {
			// Reverting to the spec that just failed would loop.
			changed, err := s.specChanged(plan.Job, target)
			if err != nil {
				return err
			}
			if !changed {
				target = nil
			}
		}
		if target != nil {
			failed.StatusDescription += fmt.Sprintf(" - rolling back to job version %d", target.Version)
		}
		res := s.submitPlan(s.ctx, &pendingPlan{plan: plan, evals: evals})
		if res.Err != nil {
			return res.Err
		}
		if target != nil && res.Index != 0 {
			s.autoRevert(failed, target)
		}
		if !res.Rejected {
			return nil
		}
		if attempt >= maxPlanAttempts {
			return fmt.Errorf("plan rejected %d times: node capacity keeps changing", attempt)
		}
	}
}

// evalOutcome returns the evaluation updates to commit with a plan: the
// evaluation itself (complete, or still blocked), a new blocked evaluation
// when placements failed, and cancellations of the job's older blocked
// evaluations it supersedes.
func (s *Server) evalOutcome(snap *state.StateSnapshot, eval *structs.Evaluation, plan *scheduler.Plan, snapIndex uint64) ([]*structs.Evaluation, error) {
	now := s.clock.Now().UnixNano()
	upd := eval.Copy()
	upd.SnapshotIndex = snapIndex
	upd.FailedTGAllocs = plan.FailedTGAllocs
	upd.QueuedAllocations = plan.QueuedAllocations
	upd.ModifyTime = now
	out := []*structs.Evaluation{upd}

	jobEvals, err := snap.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("read evals of job %q: %w", eval.JobID, err)
	}
	for _, e := range jobEvals {
		if e.ID == eval.ID || e.Status != structs.EvalStatusBlocked {
			continue
		}
		c := e.Copy()
		c.Status = structs.EvalStatusCancelled
		c.StatusDescription = fmt.Sprintf("superseded by evaluation %s", eval.ID)
		c.ModifyTime = now
		out = append(out, c)
	}

	switch {
	case len(plan.FailedTGAllocs) == 0:
		upd.Status = structs.EvalStatusComplete
		if eval.Status == structs.EvalStatusBlocked {
			upd.StatusDescription = ""
		}
	case eval.Status == structs.EvalStatusBlocked:
		// Still blocked: committing it re-registers it with the tracker
		// at this snapshot's index.
		upd.Status = structs.EvalStatusBlocked
		upd.StatusDescription = descBlocked
	default:
		upd.Status = structs.EvalStatusComplete
		b := &structs.Evaluation{
			ID:                structs.GenerateUUID(),
			Namespace:         eval.Namespace,
			Priority:          eval.Priority,
			Type:              eval.Type,
			TriggeredBy:       structs.EvalTriggerQueuedAllocs,
			JobID:             eval.JobID,
			JobModifyIndex:    eval.JobModifyIndex,
			Status:            structs.EvalStatusBlocked,
			StatusDescription: descBlocked,
			PreviousEval:      eval.ID,
			FailedTGAllocs:    plan.FailedTGAllocs,
			QueuedAllocations: plan.QueuedAllocations,
			SnapshotIndex:     snapIndex,
			CreateTime:        now,
			ModifyTime:        now,
		}
		upd.BlockedEval = b.ID
		out = append(out, b)
	}
	return out, nil
}

// failEval records that an evaluation could not be processed.
func (s *Server) failEval(eval *structs.Evaluation, cause error) {
	upd := eval.Copy()
	upd.Status = structs.EvalStatusFailed
	upd.StatusDescription = cause.Error()
	upd.ModifyTime = s.clock.Now().UnixNano()
	if _, _, err := s.raftApply(EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{upd}}); err != nil {
		s.logger.Error("mark evaluation failed", "eval_id", eval.ID, "error", err)
	}
}
