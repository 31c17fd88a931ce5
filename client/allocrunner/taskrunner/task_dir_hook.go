package taskrunner

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

var _ prestartHook = (*taskDirHook)(nil)

// taskDirHook builds the task's directory once, before the first start.
type taskDirHook struct {
	events eventEmitter
}

// Name returns "task_dir".
func (*taskDirHook) Name() string { return "task_dir" }

// Prestart emits "Task Setup" and builds the task directory.
func (h *taskDirHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	h.events.EmitEvent(structs.NewTaskEvent(structs.TaskSetup).SetMessage("Building Task Directory"))
	if err := req.TaskDir.Build(); err != nil {
		return fmt.Errorf("build task directory for %q: %w", req.Task.Name, err)
	}
	resp.Done = true
	return nil
}
