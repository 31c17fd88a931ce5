package taskrunner

import (
	"context"
	"errors"
	"fmt"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// ExecStreaming runs an interactive command inside the running task through
// its driver (alloc exec) and returns the command's exit. It does not
// change the task: no event, no state. A task that is not running is a
// conflict; a driver without interactive exec is an invalid request. The
// driver owns opts.Stdin for the call and closes it.
func (tr *TaskRunner) ExecStreaming(ctx context.Context, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	closeStdin := func() {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
	}
	tr.mu.RLock()
	h := tr.local.TaskHandle
	state := tr.state.State
	tr.mu.RUnlock()
	if h == nil || h.Config == nil || state != structs.TaskStateRunning {
		closeStdin()
		return nil, structs.NewError(structs.KindConflict,
			"task %q is not running (it is %s): exec needs a running task", tr.taskName, state)
	}
	esp, ok := tr.driver.(drivers.ExecStreamingPlugin)
	if !ok {
		closeStdin()
		return nil, notSupported(tr.taskName, tr.driver.Name())
	}
	res, err := esp.ExecTaskStreaming(ctx, h.Config.ID, opts)
	switch {
	case errors.Is(err, drivers.ErrNotSupported):
		return nil, notSupported(tr.taskName, tr.driver.Name())
	case errors.Is(err, drivers.ErrTaskNotFound):
		return nil, structs.NewError(structs.KindConflict, "task %q is not running: its driver no longer knows it", tr.taskName)
	case err != nil:
		return nil, fmt.Errorf("exec in task %q: %w", tr.taskName, err)
	}
	return res, nil
}

func notSupported(task, driver string) error {
	return structs.Invalid("task %q: its driver %q does not support alloc exec", task, driver)
}
