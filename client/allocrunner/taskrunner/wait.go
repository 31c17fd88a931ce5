package taskrunner

import (
	"context"
	"errors"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// waitOutcome says how waiting on a running task ended.
type waitOutcome int

const (
	// outcomeExited: the task exited on its own; restart policy applies.
	outcomeExited waitOutcome = iota
	// outcomeKilled: the task was killed and is dead.
	outcomeKilled
	// outcomeShutdown: the runner is shutting down; the task keeps running.
	outcomeShutdown
	// outcomeUserRestart: an operator asked for a restart; the task stopped.
	outcomeUserRestart
)

// waitTask waits for the running task to exit, to be killed, to be
// restarted by an operator (req is then the request), or for the runner
// to shut down. Every path on which the task ended records Terminated.
func (tr *TaskRunner) waitTask(h *drivers.TaskHandle) (*drivers.ExitResult, waitOutcome, *restartRequest) {
	id := h.Config.ID
	tr.stats.start(tr.shutdownCtx, id)
	defer tr.stats.stop()
	waitCtx, cancelWait := context.WithCancel(tr.shutdownCtx)
	defer cancelWait()
	exitCh, err := tr.driver.WaitTask(waitCtx, id)
	if err != nil {
		if tr.shutdownCtx.Err() != nil {
			return nil, outcomeShutdown, nil
		}
		res := &drivers.ExitResult{ExitCode: -1, Err: err}
		tr.taskEnded(id, res)
		return res, outcomeExited, nil
	}
	select {
	case res, ok := <-exitCh:
		if !ok || res == nil {
			if tr.shutdownCtx.Err() != nil {
				return nil, outcomeShutdown, nil
			}
			res = &drivers.ExitResult{ExitCode: -1, Err: errors.New("driver closed the wait channel without a result")}
		}
		tr.taskEnded(id, res)
		return res, outcomeExited, nil
	case <-tr.killContext().Done():
		if tr.shutdownCtx.Err() != nil {
			return nil, outcomeShutdown, nil
		}
		res, stopErr, ok := tr.stopTask(id, exitCh, tr.takeKillReason())
		if !ok {
			return nil, outcomeShutdown, nil
		}
		// Dead now (its exit is recorded): say so before releasing it in
		// the driver, which waits for the shim to exit and removes its
		// state, so that a stop is reported without waiting for that.
		tr.updateState(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskKilled).SetKillError(stopErr))
		tr.releaseTask(id)
		return res, outcomeKilled, nil
	case req := <-tr.restartCh:
		res, _, ok := tr.stopTask(id, exitCh, "")
		if !ok {
			return nil, outcomeShutdown, nil
		}
		tr.releaseTask(id)
		return res, outcomeUserRestart, req
	}
}

// stopTask records Killing, stops the task with its kill signal and
// timeout, waits (bounded) for its exit, and records Terminated; the
// caller releases the task (releaseTask). ok is false when the runner was
// shut down meanwhile.
func (tr *TaskRunner) stopTask(id string, exitCh <-chan *drivers.ExitResult, reason string) (res *drivers.ExitResult, stopErr error, ok bool) {
	_, task := tr.allocAndTask()
	timeout := task.KillTimeout
	if timeout <= 0 {
		timeout = structs.DefaultKillTimeout
	}
	tr.EmitEvent(structs.NewTaskEvent(structs.TaskKilling).SetKillTimeout(timeout, task.KillSignal).SetKillReason(reason))

	ctx, cancel := context.WithTimeout(tr.shutdownCtx, timeout+tr.killGrace)
	defer cancel()
	stopErr = untrusted(ctx, "stop task", func(ctx context.Context) error {
		return tr.driver.StopTask(ctx, id, timeout, task.KillSignal)
	})
	if stopErr != nil {
		tr.logger.Warn("stop task failed", "error", stopErr)
	}
	select {
	case r, got := <-exitCh:
		if got {
			res = r
		}
	case <-ctx.Done():
	}
	if tr.shutdownCtx.Err() != nil {
		return nil, stopErr, false
	}
	if res == nil {
		res = &drivers.ExitResult{ExitCode: -1, Err: errNoExit}
		if stopErr == nil {
			stopErr = errNoExit
		}
	}
	tr.recordExit(res)
	return res, stopErr, true
}

// taskEnded records Terminated, releases the task in the driver and
// forgets its handle.
func (tr *TaskRunner) taskEnded(id string, res *drivers.ExitResult) {
	tr.recordExit(res)
	tr.releaseTask(id)
}

// recordExit records the Terminated event of an exit.
func (tr *TaskRunner) recordExit(res *drivers.ExitResult) {
	ev := structs.NewTaskEvent(structs.TaskTerminated).
		SetExitCode(res.ExitCode).SetSignal(res.Signal).SetOOMKilled(res.OOMKilled)
	if res.Err != nil {
		ev.SetMessage(res.Err.Error())
	}
	tr.EmitEvent(ev)
}

// releaseTask releases an exited task in the driver (DestroyTask: the
// shim's state is removed once it exited) and forgets its handle.
func (tr *TaskRunner) releaseTask(id string) {
	ctx, cancel := context.WithTimeout(tr.shutdownCtx, destroyTimeout)
	defer cancel()
	err := untrusted(ctx, "destroy task", func(ctx context.Context) error { return tr.driver.DestroyTask(ctx, id, true) })
	if err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
		tr.logger.Warn("destroy task failed", "error", err)
	}
	tr.clearHandle()
}

// takeKillReason returns the reason given to Kill.
func (tr *TaskRunner) takeKillReason() string {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.killReason
}
