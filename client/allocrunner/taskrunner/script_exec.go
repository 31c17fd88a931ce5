package taskrunner

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Exec runs cmd inside the task's current invocation through its driver
// (a script check), bounded by timeout. It fails with a conflict when the
// task has no invocation.
func (tr *TaskRunner) Exec(ctx context.Context, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	inv := tr.Invocation()
	if inv == nil {
		return nil, structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	res, err := tr.driver.ExecTask(ctx, inv.ID, cmd, timeout)
	if err != nil {
		return nil, fmt.Errorf("exec in task %q: %w", tr.taskName, err)
	}
	return res, nil
}
