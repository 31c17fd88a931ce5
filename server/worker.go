package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// maxPlanAttempts bounds how often in a row an evaluation is rescheduled
// after the plan applier rejected its plan without committing any of its
// placements, when nothing was committed between the pass's snapshot and
// the applier's check (the scheduler and the applier disagree: another
// pass would only meet the same rejection). A rejected plan that placed
// some made progress and starts the counts again (as Nomad's scheduler
// does): with several servers' workers competing for the same nodes a
// pass may be cut short many times, each time placing more, and failing
// it there would leave the rest to a follow-up evaluation seconds later.
// Such a pass still ends: each of its attempts places at least one
// allocation, and the eval timeout bounds it.
const maxPlanAttempts = 5

// maxContendedAttempts bounds the rejections in a row without a placement
// where another plan was committed between the pass's snapshot and the
// applier's check: workers that rank the nodes alike (bin-packing) all
// choose the fullest node with room, one wins, the others schedule again
// on the state it left and meet on the next node, so that with W workers
// competing a pass may lose W-1 times in a row (6 workers with 3 servers
// on 2 cores; bench/cluster saw passes lose 5 times).
const maxContendedAttempts = 20

const descBlocked = "created to place remaining allocations"

// followUpDelay and followUpJitter set when the follow-up of an evaluation
// whose plans kept being rejected runs: after followUpDelay plus up to
// followUpJitter, so that the workers that competed for the same nodes
// (every worker ranks the nodes alike) do not meet again at once.
const (
	followUpDelay  = time.Second
	followUpJitter = 4 * time.Second
)

// planRejectedError is the failure of a pass whose plan the plan applier
// rejected without a placement too many times in a row (maxPlanAttempts,
// maxContendedAttempts): other workers' plans kept taking the room it
// chose first. The evaluation fails with a follow-up
// that places the rest later (failEval).
type planRejectedError struct{ attempts int }

func (e *planRejectedError) Error() string {
	return fmt.Sprintf("plan rejected %d times: node capacity keeps changing (a follow-up evaluation places the rest)", e.attempts)
}

// snapshot returns a snapshot of the current state store.
func (s *Server) snapshot() *state.StateSnapshot { return s.fsm.State().Snapshot() }

// snapshotAt returns a snapshot of the state store once it holds every
// raft entry up to minIndex (a follower's store may lag the leader's), or
// ctx's cause when ctx ends first.
func (s *Server) snapshotAt(ctx context.Context, minIndex uint64) (*state.StateSnapshot, error) {
	if err := s.waitForIndex(ctx, minIndex); err != nil {
		return nil, err
	}
	return s.snapshot(), nil
}

// evalTimeoutError is the cause of a scheduling pass stopped at its
// deadline (Config.EvalTimeout).
type evalTimeoutError struct{ limit time.Duration }

func (e *evalTimeoutError) Error() string {
	return fmt.Sprintf("scheduling took longer than %s (server.eval_nack_timeout) and was stopped: "+
		"lower the job's counts or constraints, or raise eval_nack_timeout", e.limit)
}

// evalContext returns a context for one scheduling pass: parent's,
// cancelled with an evalTimeoutError after Config.EvalTimeout on the
// server's clock. stop releases it.
func (s *Server) evalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	timer := s.clock.AfterFunc(s.config.EvalTimeout, func() { cancel(&evalTimeoutError{limit: s.config.EvalTimeout}) })
	return ctx, func() {
		timer.Stop()
		cancel(nil)
	}
}

// asEvalTimeout is errors.As for the cause of a pass stopped at its
// deadline.
func asEvalTimeout(err error, target **evalTimeoutError) bool { return errors.As(err, target) }

// processEval schedules an evaluation and commits the plan, scheduling
// again on a fresh snapshot when the plan applier rejected part of it
// (another worker's plan took the room first). ctx bounds the work;
// snapshot gives the state to schedule on, at least as new as its
// minIndex (snapshotAt; a test gives a stale or lagging one); token is
// the evaluation's dequeue token ("" for a test's direct call).
func (s *Server) processEval(ctx context.Context, eval *structs.Evaluation, token string,
	snapshot func(ctx context.Context, minIndex uint64) (*state.StateSnapshot, error)) error {
	var minIndex uint64
	stuck, contended := 0, 0 // rejections in a row without a placement
	for attempt := 1; ; attempt++ {
		waitStart := time.Now()
		snap, err := snapshot(ctx, minIndex)
		if minIndex > 0 {
			s.config.Timers.MeasureSince(timerWorkerWaitForIndex, waitStart)
		}
		if err != nil {
			return err
		}
		cur, err := snap.EvalByID(nil, eval.ID)
		if err != nil {
			return fmt.Errorf("read eval: %w", err)
		}
		if cur == nil || cur.TerminalStatus() {
			return nil // cancelled or already processed
		}
		snapIndex := snap.LatestIndex()
		invokeStart := time.Now()
		plan, err := scheduler.Options{Context: ctx, Now: s.clock.Now}.Process(schedState{snap: snap}, cur)
		s.config.Timers.MeasureSince(timerWorkerInvoke, invokeStart)
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
		s.timeline.Mark(eval.ID, structs.StepPlanSubmitted)
		res := s.submitPlanVia(ctx, &pendingPlan{plan: plan, evals: evals}, token)
		if res.Err != nil {
			return res.Err
		}
		if target != nil && res.Index != 0 {
			s.autoRevert(failed, target)
		}
		if !res.Rejected {
			return nil
		}
		switch {
		case res.Placed > 0: // progress: the counts start again
			stuck, contended = 0, 0
		case res.RefreshIndex > snapIndex: // another plan took the room
			contended++
		default:
			stuck++
		}
		if stuck >= maxPlanAttempts || contended >= maxContendedAttempts {
			return &planRejectedError{attempts: stuck + contended}
		}
		// Schedule again on state that holds what was committed and what
		// the applier checked the plan against: a follower's state may
		// lack the plans that took the room, and scheduling on it again
		// would only choose the same full nodes again.
		minIndex = max(res.Index, res.RefreshIndex)
		s.logger.Debug("plan partly rejected: scheduling again on fresh state", "eval_id", eval.ID, "attempt", attempt)
	}
}

// evalOutcome returns the evaluation updates to commit with a plan: the
// evaluation itself (complete, or still blocked), a new blocked evaluation
// when placements failed, and cancellations of the job's other
// evaluations this pass covered (see covered).
func (s *Server) evalOutcome(snap *state.StateSnapshot, eval *structs.Evaluation, plan *scheduler.Plan, snapIndex uint64) ([]*structs.Evaluation, error) {
	now := s.clock.Now().UnixNano()
	upd := eval.Copy()
	upd.SnapshotIndex = snapIndex
	upd.FailedTGAllocs = plan.FailedTGAllocs
	upd.QueuedAllocations = plan.QueuedAllocations
	upd.ModifyTime = now
	if d := currentDeployment(plan); d != nil {
		upd.DeploymentID = d.ID
	}
	out := []*structs.Evaluation{upd}

	jobEvals, err := snap.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("read evals of job %q: %w", eval.JobID, err)
	}
	for _, e := range jobEvals {
		if e.ID == eval.ID || !s.covered(e) {
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
		b := blockedEval(eval, plan, snapIndex, now)
		upd.BlockedEval = b.ID
		out = append(out, b)
	}
	return out, nil
}

// currentDeployment returns the job's deployment the plan creates or
// updates (not one it cancels), nil when there is none.
func currentDeployment(plan *scheduler.Plan) *structs.Deployment {
	for _, d := range plan.Deployments {
		if d.Active() {
			return d
		}
	}
	return nil
}

// blockedEval is the evaluation that waits, blocked, for the capacity
// that the placements the plan failed need; eval is the one planned.
func blockedEval(eval *structs.Evaluation, plan *scheduler.Plan, snapIndex uint64, now int64) *structs.Evaluation {
	return &structs.Evaluation{
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
}

// covered reports whether a pass over a job did the work that another
// evaluation of the job, read from the pass's snapshot, asks for, so that
// it can be cancelled: a blocked one, or a pending one whose WaitUntil has
// passed. The scheduler reads only the job's state, never the
// evaluation's trigger, and the snapshot holds every change that created
// the evaluation; this is how the broker's one-evaluation-per-job queue
// coalesces a burst of evaluations into one pass.
func (s *Server) covered(e *structs.Evaluation) bool {
	switch e.Status {
	case structs.EvalStatusBlocked:
		return true
	case structs.EvalStatusPending:
		return !e.WaitUntil.After(s.clock.Now())
	}
	return false
}

// failEval records that an evaluation could not be processed: an empty
// plan that commits the evaluation failed, through the leader's plan
// applier. A pass that failed only because its plans kept being rejected
// (planRejectedError) gets a pending follow-up evaluation, delayed a few
// seconds, so that the placements the accepted parts left out are made.
func (s *Server) failEval(eval *structs.Evaluation, token string, cause error) {
	now := s.clock.Now()
	upd := eval.Copy()
	upd.Status = structs.EvalStatusFailed
	upd.StatusDescription = cause.Error()
	upd.ModifyTime = now.UnixNano()
	evals := []*structs.Evaluation{upd}
	var rejected *planRejectedError
	if errors.As(cause, &rejected) {
		next := &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      eval.Namespace,
			Priority:       eval.Priority,
			Type:           eval.Type,
			TriggeredBy:    structs.EvalTriggerRetryFailed,
			JobID:          eval.JobID,
			JobModifyIndex: eval.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			PreviousEval:   eval.ID,
			WaitUntil:      now.Add(followUpDelay + rand.N(followUpJitter)),
			CreateTime:     now.UnixNano(),
			ModifyTime:     now.UnixNano(),
		}
		upd.NextEval = next.ID
		evals = append(evals, next)
	}
	res := s.submitPlanVia(s.ctx, &pendingPlan{plan: &scheduler.Plan{EvalID: eval.ID}, evals: evals}, token)
	if res.Err != nil {
		s.logger.Error("mark evaluation failed", "eval_id", eval.ID, "error", res.Err)
	}
}
