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
	waitCh := tr.requestKill(ev)
	select {
	case <-waitCh:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kill task %q: %w", tr.taskName, ctx.Err())
	}
}

// RequestKill marks the task to be killed, as Kill does, without waiting.
// Marking a runner before its Run starts means the task never starts.
func (tr *TaskRunner) RequestKill(ev *structs.TaskEvent) {
	tr.requestKill(ev)
}

// requestKill marks the current run to be killed and returns its WaitCh.
func (tr *TaskRunner) requestKill(ev *structs.TaskEvent) <-chan struct{} {
	tr.mu.Lock()
	dead := tr.state.State == structs.TaskStateDead
	if ev != nil && ev.Type == structs.TaskKilling && tr.killReason == "" {
		tr.killReason = ev.KillReason
	}
	killCtx, killCancel, waitCh := tr.killCtx, tr.killCancel, tr.waitCh
	tr.mu.Unlock()
	if ev != nil && ev.Type != structs.TaskKilling && !dead && killCtx.Err() == nil {
		tr.EmitEvent(ev)
	}
	killCancel()
	return waitCh
}

// Signal sends a signal to the running task and records a Signaling event.
func (tr *TaskRunner) Signal(ctx context.Context, sig string) error {
	return tr.signalTask(ctx, sig, "signal requested by operator") // template_hook.go
}

// Shutdown stops the run loop, leaving the task running, and waits for
// Run to return if it was called.
func (tr *TaskRunner) Shutdown() {
	tr.shutdownCancel()
	tr.mu.RLock()
	started, waitCh := tr.runClaimed, tr.waitCh
	tr.mu.RUnlock()
	if started {
		<-waitCh
	}
}
