package taskrunner

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// Kill marks the task to be killed and waits until the run loop has
// converged (the task is dead) or ctx is done. ev, when not nil, is the
// reason: a Killing event gives its KillReason to the Killing event the
// runner records when it signals the task; any other event (Leader Task
// Dead, Sibling Task Failed, ...) is recorded at once. Run must have been
// called (or be called later), or Kill waits for ctx.
func (tr *TaskRunner) Kill(ctx context.Context, ev *structs.TaskEvent) error {
	tr.RequestKill(ev)
	select {
	case <-tr.waitCh:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill task %q: %w", tr.taskName, ctx.Err())
	}
}

// RequestKill marks the task to be killed, as Kill does, without waiting.
// Marking a runner before its Run starts means the task never starts.
func (tr *TaskRunner) RequestKill(ev *structs.TaskEvent) {
	tr.mu.Lock()
	dead := tr.state.State == structs.TaskStateDead
	if ev != nil && ev.Type == structs.TaskKilling && tr.killReason == "" {
		tr.killReason = ev.KillReason
	}
	tr.mu.Unlock()
	if ev != nil && ev.Type != structs.TaskKilling && !dead && tr.killCtx.Err() == nil {
		tr.EmitEvent(ev)
	}
	tr.killCancel()
}

// Restart asks the run loop to stop the running task and start it again
// at once, outside the restart policy. ev (nil: a default Restart
// Signaled event) is recorded. It fails when the task is not running.
func (tr *TaskRunner) Restart(ctx context.Context, ev *structs.TaskEvent) error {
	if tr.TaskState().State != structs.TaskStateRunning || tr.killCtx.Err() != nil {
		return structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	if ev == nil {
		ev = structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason("User requested restart")
	}
	tr.EmitEvent(ev)
	select {
	case tr.restartCh <- struct{}{}:
	default: // a restart is already pending
	}
	return nil
}

// Signal sends a signal to the running task and records a Signaling event.
func (tr *TaskRunner) Signal(ctx context.Context, sig string) error {
	tr.mu.RLock()
	h := tr.local.TaskHandle
	running := tr.state.State == structs.TaskStateRunning
	tr.mu.RUnlock()
	if h == nil || h.Config == nil || !running {
		return structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	tr.EmitEvent(structs.NewTaskEvent(structs.TaskSignaling).SetTaskSignal(sig).SetTaskSignalReason("signal requested by operator"))
	err := untrusted(ctx, "signal task", func(ctx context.Context) error { return tr.driver.SignalTask(ctx, h.Config.ID, sig) })
	if err != nil {
		return fmt.Errorf("signal task %q: %w", tr.taskName, err)
	}
	return nil
}

// Shutdown stops the run loop, leaving the task running, and waits for
// Run to return if it was called.
func (tr *TaskRunner) Shutdown() {
	tr.shutdownCancel()
	tr.mu.RLock()
	started := tr.runClaimed
	tr.mu.RUnlock()
	if started {
		<-tr.waitCh
	}
}
