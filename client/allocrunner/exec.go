package allocrunner

import (
	"context"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// ExecTask runs an interactive command inside the running task (alloc
// exec); see taskrunner.TaskRunner.ExecStreaming.
func (ar *AllocRunner) ExecTask(ctx context.Context, task string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	tr, ok := ar.tasks[task]
	if !ok {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
		return nil, structs.NotFound("task", task)
	}
	return tr.ExecStreaming(ctx, opts)
}
