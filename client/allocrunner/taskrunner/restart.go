package taskrunner

import (
	"context"

	"github.com/drover-io/drover/structs"
)

// ReasonUserRestart is the reason of an operator restart that gives none.
const ReasonUserRestart = "User requested restart"

// restartRequest is an operator restart handed to the run loop through
// restartCh.
type restartRequest struct {
	// reason is the Restarting event's reason.
	reason string
	// release, when not nil, holds the task stopped until it is closed.
	release <-chan struct{}
	// stopped, when not nil, is closed once the task has stopped.
	stopped chan struct{}
}

// restartEvent returns ev, or the default Restart Signaled event when nil.
func restartEvent(ev *structs.TaskEvent) *structs.TaskEvent {
	if ev == nil {
		return structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason(ReasonUserRestart)
	}
	return ev
}

// restartReason is the Restarting event's reason for a restart signalled by ev.
func restartReason(ev *structs.TaskEvent) string {
	if ev.RestartReason != "" {
		return ev.RestartReason
	}
	return ReasonUserRestart
}

// Restart asks the run loop to stop the running task and start it again
// at once, outside the restart policy: no attempt is counted. ev (nil: a
// default Restart Signaled event) is recorded. It fails with a conflict
// when the task is not running.
func (tr *TaskRunner) Restart(_ context.Context, ev *structs.TaskEvent) error {
	ev = restartEvent(ev)
	tr.mu.RLock()
	running := tr.state.State == structs.TaskStateRunning && tr.killCtx.Err() == nil
	tr.mu.RUnlock()
	if !running {
		return structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	tr.EmitEvent(ev)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	select {
	case tr.restartCh <- &restartRequest{reason: restartReason(ev)}:
	default: // a restart is already pending
	}
	return nil
}

// RestartHeld is Restart for a task that must not start again before the
// caller says so: the run loop stops the task (Killing, Terminated,
// Restarting), closes the returned channel, and waits for release to be
// closed before starting it again. A task not running at the moment (being
// set up, or waiting out a restart delay) is held at its next stop. If the
// run ends instead (the task died, was killed, or the runner shut down),
// the returned channel is never closed but WaitCh is; a kill while held
// ends the run with Killed. It fails with a conflict when the run has not
// started, has ended, the task is dead, or it is being killed. One held
// restart may be pending at a time; it absorbs a pending Restart.
func (tr *TaskRunner) RestartHeld(ev *structs.TaskEvent, release <-chan struct{}) (<-chan struct{}, error) {
	ev = restartEvent(ev)
	tr.mu.RLock()
	alive := tr.runClaimed && !isClosed(tr.waitCh) && tr.killCtx.Err() == nil &&
		tr.state.State != structs.TaskStateDead
	tr.mu.RUnlock()
	if !alive {
		return nil, structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	tr.EmitEvent(ev)
	req := &restartRequest{reason: restartReason(ev), release: release, stopped: make(chan struct{})}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	select {
	case <-tr.restartCh: // a pending plain restart becomes this one
	default:
	}
	// Every sender holds mu, so the buffer has room now.
	tr.restartCh <- req
	return req.stopped, nil
}

// holdForRestart completes an operator restart once the task has stopped:
// it closes req.stopped and waits for req.release. It returns false when
// the run must end: killed while held (recorded) or shut down.
func (tr *TaskRunner) holdForRestart(req *restartRequest) bool {
	if req.stopped != nil {
		close(req.stopped)
	}
	if req.release == nil {
		return true
	}
	select {
	case <-req.release:
		return true
	case <-tr.killContext().Done():
		if tr.shutdownCtx.Err() == nil {
			tr.killedNotRunning()
		}
		return false
	}
}

// Rearm prepares a runner whose run has ended with its task dead (a
// lifecycle task that completed, say) to run the task again: it gives the
// runner a new kill context and WaitCh, records ev (nil: a default Restart
// Signaled event) and a Restarting event, and moves the task back to
// pending. The caller then calls Run again; until then a Kill marks the
// new run, which converges to killed at once. The restart policy's count
// is kept: a rerun consumes no attempt. It fails with a conflict when the
// run has not ended, the task is not dead, or the runner was shut down.
func (tr *TaskRunner) Rearm(ev *structs.TaskEvent) error {
	ev = restartEvent(ev)
	tr.mu.Lock()
	if !tr.runClaimed || !isClosed(tr.waitCh) || tr.state.State != structs.TaskStateDead || tr.shutdownCtx.Err() != nil {
		tr.mu.Unlock()
		return structs.NewError(structs.KindConflict, "task %q cannot run again: its run has not ended", tr.taskName)
	}
	tr.killCancel() // releases the ended run's context
	tr.killCtx, tr.killCancel = context.WithCancel(tr.shutdownCtx)
	tr.waitCh = make(chan struct{})
	tr.runClaimed = false
	tr.killReason = ""
	select {
	case <-tr.restartCh: // a request the ended run never took
	default:
	}
	tr.mu.Unlock()
	tr.EmitEvent(ev)
	tr.updateState(structs.TaskStatePending,
		structs.NewTaskEvent(structs.TaskRestarting).SetRestartReason(restartReason(ev)))
	return nil
}

// Starts returns how many times the runner has started the task; it only
// grows, so a caller can tell that the task started again since it looked.
func (tr *TaskRunner) Starts() int {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.starts
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
