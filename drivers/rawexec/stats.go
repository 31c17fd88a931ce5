package rawexec

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// TaskStats asks the task's shim for the CPU and memory use of the task's
// process group every interval (the first sample at once) until ctx is
// done or the task exits. CPUPercent is of one core; CPUTotalTicks is the
// MHz used (CPUPercent of the host's clock); MemoryRSS is the sum over the
// group. Samples are of the whole group: Pids is not filled in.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("task stats %q: interval must be positive", t.cfg.Name)
	}
	skipped := func(err error) {
		d.logger.Debug("task stats", "alloc_id", t.cfg.AllocID, "task", t.cfg.Name, "error", err)
	}
	return t.h.StreamStats(ctx, interval, d.mhz(), skipped), nil
}
