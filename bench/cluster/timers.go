package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// stepTimers is a server.Timers that keeps every duration measured, by
// key, for the per-step table printed after a run.
type stepTimers struct {
	mu sync.Mutex // guards d
	d  map[string][]time.Duration
}

func newStepTimers() *stepTimers { return &stepTimers{d: map[string][]time.Duration{}} }

// MeasureSince implements server.Timers.
func (t *stepTimers) MeasureSince(key []string, start time.Time) {
	d := time.Since(start)
	k := strings.Join(key, ".")
	t.mu.Lock()
	defer t.mu.Unlock()
	t.d[k] = append(t.d[k], d)
}

// reset forgets what was measured so far.
func (t *stepTimers) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.d = map[string][]time.Duration{}
}

// take returns what was measured, by key.
func (t *stepTimers) take() map[string][]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string][]time.Duration, len(t.d))
	for k, v := range t.d {
		out[k] = slices.Clone(v)
	}
	return out
}

// printTimings prints, for the leader and for the followers together,
// each step's count, p50, p95 and total time.
func printTimings(servers []*benchServer, leader *benchServer) {
	roles := []struct {
		name string
		keep func(*benchServer) bool
	}{
		{"leader", func(s *benchServer) bool { return s == leader }},
		{"followers", func(s *benchServer) bool { return s != leader }},
	}
	for _, r := range roles {
		all := map[string][]time.Duration{}
		for _, s := range servers {
			if !r.keep(s) {
				continue
			}
			for k, v := range s.timers.take() {
				all[k] = append(all[k], v...)
			}
		}
		if len(all) == 0 {
			continue
		}
		keys := make([]string, 0, len(all))
		for k := range all {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Printf("steps on the %s (count, p50, p95, total):\n", r.name)
		for _, k := range keys {
			d := all[k]
			slices.Sort(d)
			var sum time.Duration
			for _, x := range d {
				sum += x
			}
			q := func(p float64) time.Duration {
				return d[min(len(d)-1, int(p*float64(len(d))))].Round(10 * time.Microsecond)
			}
			fmt.Printf("  %-32s %6d  p50 %9s  p95 %9s  total %s\n", k, len(d), q(0.5), q(0.95), sum.Round(time.Millisecond))
		}
	}
}
