package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskStats asks the task's shim for a sample of the task's cgroup every
// interval (the first sample at once) until ctx is done or the task exits.
// CPUPercent is of one core; CPUTotalTicks is the MHz used (CPUPercent of
// the host's clock); memory is the cgroup's. Pids is not filled in: the
// cgroup accounts the task as a whole.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("task stats %q: interval must be positive", t.cfg.Name)
	}
	ch := make(chan *drivers.TaskResourceUsage)
	mhz := d.mhz()
	go func() {
		defer close(ch)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			u, err := t.h.Stats(ctx)
			switch {
			case errors.Is(err, shim.ErrTaskExited), errors.Is(err, shim.ErrShimDied), ctx.Err() != nil:
				return
			case err != nil:
				// A shim busy or briefly unreachable: skip this sample.
				d.logger.Debug("task stats", "alloc_id", t.cfg.AllocID, "task", t.cfg.Name, "error", err)
			default:
				select {
				case ch <- resourceUsage(u, mhz):
				case <-ctx.Done():
					return
				}
			}
			timer.Reset(interval)
		}
	}()
	return ch, nil
}

// resourceUsage converts a shim's cgroup sample; mhz is the host's clock.
func resourceUsage(u *shim.Usage, mhz float64) *drivers.TaskResourceUsage {
	return &drivers.TaskResourceUsage{
		Timestamp:      u.Timestamp.UnixNano(),
		CPUPercent:     u.CPUPercent,
		CPUTotalTicks:  u.CPUPercent / 100 * mhz,
		MemoryRSS:      u.RSSBytes,
		MemoryCache:    u.MemoryCacheBytes,
		MemorySwap:     u.MemorySwapBytes,
		MemoryMaxUsage: u.MemoryMaxUsageBytes,
	}
}

// cpuMHz returns the first CPU's clock in MHz from /proc/cpuinfo, or 0.
func cpuMHz() float64 {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return mhz
			}
		}
	}
	return 0
}
