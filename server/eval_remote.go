package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// Every server runs scheduler workers (Config.NumWorkers), so that
// scheduling scales with the servers: a worker takes an evaluation from
// the leader's broker (EvalDequeue), waits until its own state holds what
// the leader's held then, schedules on it, and submits the plan to the
// leader's plan applier (PlanSubmit), which alone commits plans; then it
// acknowledges the evaluation (EvalAck). On the leader these calls stay
// in process; on another server they are forwarded to the leader like any
// call (forward.go). An evaluation whose worker died is given to another
// after its nack timeout.
const (
	// evalNackSlack is added to Config.EvalTimeout for the nack timeout
	// of a dequeued evaluation: a worker stops scheduling at the eval
	// timeout, and may then need a moment to record the failure.
	evalNackSlack = 30 * time.Second
	// dequeueWait is how long a worker's dequeue waits on the broker.
	dequeueWait = 5 * time.Second
	// maxDequeueWait bounds what a caller may ask for.
	maxDequeueWait = 30 * time.Second
	// workerBackoffMin and workerBackoffMax bound a worker's pause after
	// its dequeue failed (no leader, leader unreachable).
	workerBackoffMin = 100 * time.Millisecond
	workerBackoffMax = 5 * time.Second
	// ackTimeout bounds a worker's acknowledgement after its server
	// began to stop.
	ackTimeout = 2 * time.Second
)

// EvalDequeue implements rpcapi.EvalDequeue on the leader.
func (s *Server) EvalDequeue(ctx context.Context, req *structs.EvalDequeueRequest) (*structs.EvalDequeueResponse, error) {
	if !s.leader() {
		return nil, structs.NewError(structs.KindUnavailable, "server %s is not the leader: its broker holds no evaluations", s.config.NodeName)
	}
	wait := req.Timeout
	if wait <= 0 {
		wait = dequeueWait
	}
	wait = min(wait, maxDequeueWait)
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	e, token, err := s.broker.DequeueToken(dctx, req.Schedulers)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return &structs.EvalDequeueResponse{}, nil // none came in time
	}
	if ctx.Err() != nil {
		// The worker went away: give the evaluation to another now.
		_ = s.broker.Nack(e.ID, token)
		return nil, ctx.Err()
	}
	return &structs.EvalDequeueResponse{Eval: e, Token: token, WaitIndex: s.fsm.State().LatestIndex()}, nil
}

// EvalAck implements rpcapi.EvalAck on the leader.
func (s *Server) EvalAck(_ context.Context, req *structs.EvalAckRequest) (*structs.GenericResponse, error) {
	if !s.leader() {
		return nil, structs.NewError(structs.KindUnavailable, "server %s is not the leader: its broker holds no evaluations", s.config.NodeName)
	}
	var err error
	if req.Nack {
		err = s.broker.Nack(req.EvalID, req.Token)
	} else {
		err = s.broker.AckToken(req.EvalID, req.Token)
	}
	if err != nil {
		return nil, err
	}
	return &structs.GenericResponse{}, nil
}

// PlanSubmit implements rpcapi.PlanSubmit on the leader: the plan goes
// through the plan applier like a local worker's.
func (s *Server) PlanSubmit(ctx context.Context, req *structs.PlanSubmitRequest) (*structs.PlanSubmitResponse, error) {
	if !s.leader() {
		return nil, structs.NewError(structs.KindUnavailable, "server %s is not the leader: it applies no plans", s.config.NodeName)
	}
	if req.Plan == nil {
		return nil, structs.Invalid("missing plan")
	}
	if req.EvalToken != "" && !s.broker.Outstanding(req.Plan.EvalID, req.EvalToken) {
		return nil, structs.NewError(structs.KindConflict,
			"evaluation %s is no longer held by this worker (its nack timeout gave it to another): plan dropped", req.Plan.EvalID)
	}
	res := s.submitPlan(ctx, &pendingPlan{plan: fromSubmittedPlan(req.Plan), evals: req.Evals})
	if res.Err != nil {
		return nil, res.Err
	}
	return &structs.PlanSubmitResponse{Index: res.Index, Rejected: res.Rejected, RefreshIndex: res.RefreshIndex, Placed: res.Placed}, nil
}

// submitPlanVia submits a worker's plan to the leader's plan applier (in
// process on the leader).
func (s *Server) submitPlanVia(ctx context.Context, p *pendingPlan, token string) planResult {
	defer s.config.Timers.MeasureSince(timerWorkerSubmitPlan, time.Now())
	resp, err := rpcapi.PlanSubmit.Call(ctx, s, &structs.PlanSubmitRequest{
		Plan: toSubmittedPlan(p.plan), Evals: p.evals, EvalToken: token,
	})
	if err != nil {
		return planResult{Err: err}
	}
	return planResult{Index: resp.Index, Rejected: resp.Rejected, RefreshIndex: resp.RefreshIndex, Placed: resp.Placed}
}

// runWorker processes evaluations of the given scheduler types from the
// leader's broker until ctx (the worker's, cancelled when the server
// stops or the pool shrinks) is done; an evaluation it holds is finished
// under the server's context.
func (s *Server) runWorker(ctx context.Context, status *workerStatus, schedulers []string) {
	logger := s.logger.With("worker", status.id)
	backoff := workerBackoffMin
	defer status.set(workloadStopped)
	for {
		status.set(workloadWaiting)
		dequeueStart := time.Now()
		d, err := rpcapi.EvalDequeue.Call(ctx, s, &structs.EvalDequeueRequest{Timeout: dequeueWait, Worker: status.id, Schedulers: schedulers})
		if ctx.Err() != nil {
			if err == nil && d.Eval != nil {
				// Removed from the pool as it got one: give it back.
				s.ackEval(logger, d.Eval.ID, d.Token, true)
			}
			return
		}
		if err != nil {
			logger.Debug("dequeue an evaluation", "error", err)
			if !s.pause(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, workerBackoffMax)
			continue
		}
		backoff = workerBackoffMin
		if d.Eval == nil {
			continue
		}
		s.config.Timers.MeasureSince(timerWorkerDequeue, dequeueStart)
		status.set(workloadScheduling)
		s.runEval(logger, d)
	}
}

// pause waits d, or until the server stops (false). It is a network
// backoff on the wall clock: a server under a test's fake clock must not
// stall its workers on it.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runEval processes one dequeued evaluation under its deadline, then
// acknowledges it. A failure other than the server stopping marks the
// evaluation failed with the reason; a server that stops gives it back,
// for another worker (or the next leader).
func (s *Server) runEval(logger *slog.Logger, d *structs.EvalDequeueResponse) {
	eval := d.Eval
	ctx, stop := s.evalContext(s.ctx)
	defer stop()
	waitStart := time.Now()
	err := s.waitForIndex(ctx, d.WaitIndex)
	s.config.Timers.MeasureSince(timerWorkerWaitForIndex, waitStart)
	if err == nil {
		err = s.processEval(ctx, eval, d.Token, s.snapshotAt)
	}
	if s.ctx.Err() != nil {
		s.ackEval(logger, eval.ID, d.Token, true)
		return
	}
	if err != nil {
		var timeout *evalTimeoutError
		if asEvalTimeout(err, &timeout) {
			err = timeout // the description says what happened, not how it unwound
		}
		logger.Error("process evaluation", "eval_id", eval.ID, "job_id", eval.JobID, "error", err)
		s.failEval(eval, d.Token, err)
	}
	s.ackEval(logger, eval.ID, d.Token, false)
}

// ackEval acknowledges (or gives back) an evaluation to the leader's
// broker.
func (s *Server) ackEval(logger *slog.Logger, evalID, token string, nack bool) {
	defer s.config.Timers.MeasureSince(timerWorkerAck, time.Now())
	ctx := s.ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), ackTimeout)
		defer cancel()
	}
	if _, err := rpcapi.EvalAck.Call(ctx, s, &structs.EvalAckRequest{EvalID: evalID, Token: token, Nack: nack}); err != nil {
		logger.Debug("acknowledge an evaluation", "eval_id", evalID, "nack", nack, "error", err)
	}
}

// toSubmittedPlan and fromSubmittedPlan carry a plan over the wire.
func toSubmittedPlan(p *scheduler.Plan) *structs.SubmittedPlan {
	return &structs.SubmittedPlan{
		EvalID: p.EvalID, Job: p.Job, NodeUpdate: p.NodeUpdate, NodeAllocation: p.NodeAllocation,
		FailedTGAllocs: p.FailedTGAllocs, QueuedAllocations: p.QueuedAllocations, NodePreemptions: p.NodePreemptions,
		Deployments: p.Deployments, Annotations: p.Annotations, AllocUpdates: p.AllocUpdates, FollowupEvals: p.FollowupEvals,
	}
}

func fromSubmittedPlan(p *structs.SubmittedPlan) *scheduler.Plan {
	return &scheduler.Plan{
		EvalID: p.EvalID, Job: p.Job, NodeUpdate: p.NodeUpdate, NodeAllocation: p.NodeAllocation,
		FailedTGAllocs: p.FailedTGAllocs, QueuedAllocations: p.QueuedAllocations, NodePreemptions: p.NodePreemptions,
		Deployments: p.Deployments, Annotations: p.Annotations, AllocUpdates: p.AllocUpdates, FollowupEvals: p.FollowupEvals,
	}
}
