package rawexec

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// TaskStats samples the CPU and memory use of the task's process group
// every interval (the first sample at once) until ctx is done or the task
// exits. CPUPercent is of one core; CPUTotalTicks is the MHz used (percent
// of the host's clock); MemoryRSS is the sum over the group.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("task stats %q: interval must be positive", t.cfg.Name)
	}
	ch := make(chan *drivers.TaskResourceUsage)
	s := &sampler{pgid: t.proc.pid, mhz: d.mhz(), prev: make(map[int]cpuSample)}
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
				select {
				case ch <- s.sample(now):
				case <-ctx.Done():
					return
				}
				timer.Reset(interval)
			}
		}
	}()
	return ch, nil
}

// cpuSample is a process's CPU time at an instant.
type cpuSample struct {
	at    time.Time
	ticks uint64
}

// sampler computes usage of a process group from successive /proc reads.
// It is owned by one TaskStats goroutine.
type sampler struct {
	pgid int
	mhz  float64
	prev map[int]cpuSample
}

func (s *sampler) sample(now time.Time) *drivers.TaskResourceUsage {
	total := &drivers.TaskResourceUsage{Timestamp: now.UnixNano(), Pids: make(map[string]*drivers.TaskResourceUsage)}
	seen := make(map[int]cpuSample)
	for _, pid := range groupMembers(s.pgid) {
		st, err := readProcStat(pid)
		if err != nil {
			continue // exited since listed
		}
		rss, _ := readRSS(pid) // 0 when unreadable
		cur := cpuSample{at: now, ticks: st.Utime + st.Stime}
		seen[pid] = cur
		u := &drivers.TaskResourceUsage{Timestamp: total.Timestamp, MemoryRSS: rss}
		if prev, ok := s.prev[pid]; ok && cur.at.After(prev.at) && cur.ticks >= prev.ticks {
			cpuSecs := float64(cur.ticks-prev.ticks) / clockTicks
			u.CPUPercent = cpuSecs / cur.at.Sub(prev.at).Seconds() * 100
			u.CPUTotalTicks = u.CPUPercent / 100 * s.mhz
		}
		total.CPUPercent += u.CPUPercent
		total.CPUTotalTicks += u.CPUTotalTicks
		total.MemoryRSS += u.MemoryRSS
		total.Pids[strconv.Itoa(pid)] = u
	}
	s.prev = seen
	return total
}
