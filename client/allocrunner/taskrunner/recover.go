package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// recoverTimeout bounds RecoverTask after an agent restart: the driver
// talks to the task's shim, or waits for one that is still starting.
const recoverTimeout = 30 * time.Second

// errLostTask is recorded when a restored task cannot be re-attached.
var errLostTask = errors.New("could not re-attach to the task; its exit is unknown")

// recoverHandle re-attaches to the task the restored local state
// describes: by its handle, or by the start intent an agent that died
// while starting the task left without a handle. It returns
//   - the handle, when the task was found: it runs, or it ended and the
//     driver reports its exit;
//   - nil and a nil result when there is nothing to re-attach to: no
//     handle nor intent, or an intent whose task never started (the intent
//     is cleared; the run loop starts the task, once); also when the
//     runner shuts down meanwhile (handle and intent are kept for the next
//     agent);
//   - nil and the exit to apply the restart policy to when the task
//     cannot be re-attached: it started and ended without this agent
//     seeing its exit (its shim died while the agent was down, say). That
//     case is recorded as a Driver message and a Terminated event, and the
//     handle is forgotten.
//
// RecoverTask runs under the shutdown context, not the kill context: a
// kill requested meanwhile (the servers stopped the alloc while the agent
// was down) is carried out by the run loop on the re-attached task, and
// never by forgetting a task that runs.
func (tr *TaskRunner) recoverHandle() (*drivers.TaskHandle, *drivers.ExitResult) {
	tr.mu.RLock()
	h := state.CopyTaskHandle(tr.local.TaskHandle)
	intent := state.CopyTaskConfig(tr.local.StartIntent)
	tr.mu.RUnlock()
	switch {
	case h != nil:
		return tr.recoverRunning(h)
	case intent != nil:
		return tr.recoverIntent(intent)
	}
	return nil, nil
}

// recoverTask asks the driver to re-attach to h.
func (tr *TaskRunner) recoverTask(h *drivers.TaskHandle) error {
	ctx, cancel := context.WithTimeout(tr.shutdownCtx, recoverTimeout)
	defer cancel()
	return tr.driver.RecoverTask(ctx, h)
}

// recoverRunning re-attaches to a task by its saved handle.
func (tr *TaskRunner) recoverRunning(h *drivers.TaskHandle) (*drivers.TaskHandle, *drivers.ExitResult) {
	err := tr.recoverTask(h)
	if err == nil {
		tr.logger.Info("re-attached to task")
		tr.watchDriverEvents(h.Config.ID)
		if tr.TaskState().State != structs.TaskStateRunning {
			// The agent died after it saved the handle and before it
			// recorded the start.
			tr.updateState(structs.TaskStateRunning, structs.NewTaskEvent(structs.TaskStarted))
		}
		return h, nil
	}
	if tr.shutdownCtx.Err() != nil {
		return nil, nil
	}
	var id string
	if h.Config != nil {
		id = h.Config.ID
	}
	return nil, tr.lostTask(id, err)
}

// recoverIntent finds the task of a start that an agent began and never
// saw through: the intent is the config it gave the driver. The driver
// finds the task from the config (a handle without DriverState).
func (tr *TaskRunner) recoverIntent(intent *drivers.TaskConfig) (*drivers.TaskHandle, *drivers.ExitResult) {
	h := &drivers.TaskHandle{Config: intent, State: drivers.TaskStateUnknown}
	err := tr.recoverTask(h)
	switch {
	case err == nil:
		tr.logger.Info("re-attached to task found by its start intent", "task_id", intent.ID)
		tr.updateLocal("task handle found by its start intent", func(ls *state.LocalState) {
			ls.TaskHandle, ls.StartIntent = state.CopyTaskHandle(h), nil
		})
		tr.mu.Lock()
		tr.starts++
		tr.mu.Unlock()
		tr.watchDriverEvents(intent.ID)
		if tr.TaskState().State != structs.TaskStateRunning {
			// The agent died before it recorded the start.
			tr.updateState(structs.TaskStateRunning, structs.NewTaskEvent(structs.TaskStarted))
		}
		return h, nil
	case tr.shutdownCtx.Err() != nil:
		return nil, nil
	case errors.Is(err, drivers.ErrTaskNotFound):
		// The driver made sure that no task was, or will be, started for
		// the intent: start the task now.
		tr.logger.Info("the interrupted start never started the task; starting it", "task_id", intent.ID, "reason", err)
		tr.updateLocal("cleared start intent", func(ls *state.LocalState) {
			ls.InvocationID, ls.StartIntent = "", nil
		})
		return nil, nil
	}
	return nil, tr.lostTask(intent.ID, err)
}

// lostTask records a task that cannot be re-attached (err says why) as
// ended with an unknown exit, forgets its handle and intent, and returns
// the exit to apply the restart policy to.
func (tr *TaskRunner) lostTask(id string, err error) *drivers.ExitResult {
	tr.logger.Warn("could not re-attach to task; applying its restart policy", "error", err)
	tr.EmitEvent(structs.NewTaskEvent(structs.TaskDriverMessage).
		SetDriverMessage(fmt.Sprintf("Failed to re-attach to task: %v", err)))
	res := &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("%w: %w", errLostTask, err)}
	tr.taskEnded(id, res)
	return res
}

// killedLost records the kill of a task that was lost on re-attach:
// a plain kill when the driver said it is gone, else a kill with the
// error that it could not be reached (it may still run).
func (tr *TaskRunner) killedLost(lost *drivers.ExitResult) {
	ev := structs.NewTaskEvent(structs.TaskKilled)
	if !errors.Is(lost.Err, drivers.ErrTaskNotFound) {
		ev.SetKillError(fmt.Errorf("the task could not be reached to kill it; it may still run: %w", lost.Err))
	}
	tr.updateState(structs.TaskStateDead, ev)
}
