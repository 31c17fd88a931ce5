package exec

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskStats samples the task's cgroup every interval (the first sample at
// once) until ctx is done or the task exits. CPUPercent is of one core;
// CPUTotalTicks is the MHz used (the percent of the host's clock); memory
// is the cgroup's. Pids is not filled: the cgroup accounts the task as a
// whole.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("task stats %q: interval must be positive", t.cfg.Name)
	}
	ch := make(chan *drivers.TaskResourceUsage)
	s := &sampler{cg: t.proc.st.Cgroup, mhz: d.mhz()}
	go func() {
		defer close(ch)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.proc.done:
				return
			case now := <-timer.C:
				u, err := s.sample(now)
				if err != nil {
					d.logger.Debug("task stats unreadable", "alloc_id", t.cfg.AllocID, "task", t.cfg.Name, "error", err)
				} else {
					select {
					case ch <- u:
					case <-ctx.Done():
						return
					}
				}
				timer.Reset(interval)
			}
		}
	}()
	return ch, nil
}

// sampler turns successive cgroup readings into usage. It is owned by one
// TaskStats goroutine.
type sampler struct {
	cg     *isolation.Cgroup
	mhz    float64
	prevAt time.Time
	prev   *isolation.Stats
}

func (s *sampler) sample(now time.Time) (*drivers.TaskResourceUsage, error) {
	st, err := s.cg.Stats()
	if err != nil {
		return nil, err
	}
	u := &drivers.TaskResourceUsage{
		Timestamp:      now.UnixNano(),
		MemoryRSS:      st.MemoryRSS,
		MemoryCache:    st.MemoryCache,
		MemorySwap:     st.MemorySwap,
		MemoryMaxUsage: st.MemoryMaxUsage,
	}
	if u.MemoryRSS == 0 {
		// Kernels that do not split anonymous memory out: report usage.
		u.MemoryRSS = st.MemoryUsage
	}
	u.CPUPercent = isolation.CPUPercent(s.prev, st, now.Sub(s.prevAt))
	u.CPUTotalTicks = u.CPUPercent / 100 * s.mhz
	s.prevAt, s.prev = now, st
	return u, nil
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
