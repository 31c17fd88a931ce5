package shim

import (
	"os"
	"sync"
	"time"
)

// Usage is one sample of the resources used by the task's processes: for
// a task that is not isolated, every process descended from the shim
// (the shim is their subreaper, so this includes processes that left the
// task's process group or session); for an isolated task, its cgroup.
type Usage struct {
	Timestamp time.Time `json:"timestamp"`
	// CPUUserTicks, CPUSystemTicks and CPUTotalTicks are cumulative CPU
	// time in USER_HZ ticks (1/100 s) of the task's live processes and of
	// those that have exited and were reaped.
	CPUUserTicks   uint64 `json:"cpu_user_ticks"`
	CPUSystemTicks uint64 `json:"cpu_system_ticks"`
	CPUTotalTicks  uint64 `json:"cpu_total_ticks"`
	// CPUPercent is the CPU used since the previous sample, in percent of
	// one core (200 = two cores busy); for the first sample, since the
	// task started.
	CPUPercent float64 `json:"cpu_percent"`
	// RSSBytes is the summed resident set size of the task's processes.
	RSSBytes uint64 `json:"rss_bytes"`
	// Pids is the number of the task's processes (of an isolated task:
	// tasks, threads included, in its cgroup).
	Pids int `json:"pids"`

	// An isolated task is measured from its cgroup: RSSBytes is its
	// anonymous memory (or all charged memory where the kernel does not
	// split it out), the tick counts are converted from the cgroup's CPU
	// time, and these are filled in too.
	MemoryCacheBytes    uint64 `json:"memory_cache_bytes,omitempty"`
	MemorySwapBytes     uint64 `json:"memory_swap_bytes,omitempty"`
	MemoryMaxUsageBytes uint64 `json:"memory_max_usage_bytes,omitempty"`
}

// usageSampler takes one sample of the task's resource use. It works only
// when asked: nothing samples in the background.
type usageSampler interface {
	sample() (*Usage, error)
}

// treeSampler measures the processes descended from root (the shim) and
// remembers the previous sample to compute CPUPercent.
type treeSampler struct {
	root int
	// started is when the task started: the first sample's CPUPercent is
	// the average since then.
	started time.Time
	now     func() time.Time

	mu   sync.Mutex // guards the field below
	prev *Usage
}

func (s *treeSampler) sample() (*Usage, error) {
	u := &Usage{Timestamp: s.now()}
	// The CPU time of the task's processes that exited and were reaped by
	// the shim (orphans) is in the shim's children's times; the shim's
	// other child, the task's main process, is reaped only at the end.
	self, err := readProcStat(s.root)
	if err != nil {
		return nil, err
	}
	u.CPUUserTicks, u.CPUSystemTicks = self.cutime, self.cstime
	pids, err := descendants(s.root)
	if err != nil {
		return nil, err
	}
	page := uint64(os.Getpagesize())
	for _, pid := range pids {
		st, err := readProcStat(pid)
		if err != nil {
			continue // exited and reaped meanwhile
		}
		u.CPUUserTicks += st.utime + st.cutime
		u.CPUSystemTicks += st.stime + st.cstime
		u.RSSBytes += st.rssPages * page
		u.Pids++
	}
	u.CPUTotalTicks = u.CPUUserTicks + u.CPUSystemTicks

	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.prev
	if prev == nil {
		prev = &Usage{Timestamp: s.started}
	}
	if secs := u.Timestamp.Sub(prev.Timestamp).Seconds(); secs > 0 && u.CPUTotalTicks > prev.CPUTotalTicks {
		u.CPUPercent = float64(u.CPUTotalTicks-prev.CPUTotalTicks) / userHZ / secs * 100
	}
	s.prev = u
	c := *u
	return &c, nil
}
