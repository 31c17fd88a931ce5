package shim

import (
	"os"
	"sync"
	"time"
)

// Usage is one sample of the resources used by the task's process group,
// read from /proc. Processes that left the group (setpgid/setsid) are not
// counted.
type Usage struct {
	Timestamp time.Time `json:"timestamp"`
	// CPUUserTicks, CPUSystemTicks and CPUTotalTicks are cumulative CPU
	// time in USER_HZ ticks (1/100 s) of the group's live processes and of
	// the children they have reaped.
	CPUUserTicks   uint64 `json:"cpu_user_ticks"`
	CPUSystemTicks uint64 `json:"cpu_system_ticks"`
	CPUTotalTicks  uint64 `json:"cpu_total_ticks"`
	// CPUPercent is the CPU used since the previous sample, in percent of
	// one core (200 = two cores busy); 0 for the first sample.
	CPUPercent float64 `json:"cpu_percent"`
	// RSSBytes is the summed resident set size of the group's processes.
	RSSBytes uint64 `json:"rss_bytes"`
	// Pids is the number of processes in the group (of an isolated task:
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

// usageSampler takes one sample of the task's resource use.
type usageSampler interface {
	sample() (*Usage, error)
}

// sampler measures a process group and remembers the previous sample to
// compute CPUPercent.
type sampler struct {
	pgid int
	now  func() time.Time

	mu   sync.Mutex // guards the field below
	prev *Usage
}

func (s *sampler) sample() (*Usage, error) {
	u := &Usage{Timestamp: s.now()}
	page := uint64(os.Getpagesize())
	err := eachProcess(func(pid int, st *procStat) {
		if st.pgrp != s.pgid {
			return
		}
		u.CPUUserTicks += st.utime + st.cutime
		u.CPUSystemTicks += st.stime + st.cstime
		u.RSSBytes += st.rssPages * page
		u.Pids++
	})
	if err != nil {
		return nil, err
	}
	u.CPUTotalTicks = u.CPUUserTicks + u.CPUSystemTicks

	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.prev; p != nil {
		secs := u.Timestamp.Sub(p.Timestamp).Seconds()
		if secs > 0 && u.CPUTotalTicks > p.CPUTotalTicks {
			u.CPUPercent = float64(u.CPUTotalTicks-p.CPUTotalTicks) / userHZ / secs * 100
		}
	}
	s.prev = u
	c := *u
	return &c, nil
}
