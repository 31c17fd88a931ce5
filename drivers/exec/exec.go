package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// ExecTask runs cmd inside the task's namespaces and root.
func (d *Driver) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	return nil, fmt.Errorf("exec task: %w", drivers.ErrNotSupported)
}
