package agent

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// The gc_memory_limit setting: a soft limit on the memory the Go runtime
// holds (heap, goroutine stacks, its own metadata), set with
// debug.SetMemoryLimit. Near the limit the collector runs sooner and the
// runtime returns freed pages to the OS sooner; it never refuses memory.
const (
	// MemoryLimitAuto (the default) keeps the runtime's memory under
	// autoMemoryFloor while the agent is small, and otherwise lets it grow
	// with a quarter of the live heap as headroom (autoMemoryLimit).
	MemoryLimitAuto = "auto"
	// MemoryLimitOff leaves the runtime alone (GOGC=100, or the GOGC and
	// GOMEMLIMIT of the agent's environment).
	MemoryLimitOff = "off"
)

const (
	// autoMemoryFloor is the auto limit of a small agent: an idle agent
	// holds about 20 MiB, one running 1,000 tasks about 70 MiB of live
	// heap and stacks.
	autoMemoryFloor = 96 << 20
	// autoMemoryCeiling is the live heap above which auto sets no limit:
	// such an agent (a busy server) is better served by Go's default pace
	// than by a tighter one.
	autoMemoryCeiling = 256 << 20
	// memoryLimitInterval is how often auto adapts the limit.
	memoryLimitInterval = 10 * time.Second
)

// parseMemoryLimit checks a gc_memory_limit value: "auto", "off", or a
// size ("128MiB", "200MB", bytes); it returns the size in bytes (0 for
// auto and off).
func parseMemoryLimit(s string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", MemoryLimitAuto, MemoryLimitOff:
		return 0, nil
	}
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("gc_memory_limit = %q: %w, or \"auto\" or \"off\"", s, err)
	}
	if n < 32<<20 {
		return 0, fmt.Errorf("gc_memory_limit = %q: too small for an agent: at least 32MiB (or \"off\")", s)
	}
	return n, nil
}

// autoMemoryLimit is the auto limit for an agent whose live heap is
// heapLive bytes and whose other runtime memory (stacks, metadata) is
// nonHeap bytes: at least autoMemoryFloor, and at least a quarter of the
// live heap above what the agent holds, so that the collector never runs
// more than about four times as often as Go's default would; no limit
// (math.MaxInt64) above autoMemoryCeiling.
func autoMemoryLimit(heapLive, nonHeap uint64) int64 {
	if heapLive > autoMemoryCeiling {
		return math.MaxInt64
	}
	return int64(max(heapLive+heapLive/4+nonHeap, autoMemoryFloor))
}

// memoryLimiter applies gc_memory_limit; with auto it adapts the limit
// every memoryLimitInterval from a goroutine that Stop ends.
type memoryLimiter struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	prev   int64 // the limit before the agent set one, restored by Stop
}

// startMemoryLimiter applies setting (parsed by parseMemoryLimit) unless
// the environment sets GOMEMLIMIT, which then wins. It returns nil when
// it sets nothing.
func startMemoryLimiter(setting string, logger *slog.Logger) *memoryLimiter {
	if env := os.Getenv("GOMEMLIMIT"); env != "" {
		logger.Info("gc_memory_limit not applied: GOMEMLIMIT is set in the environment", "GOMEMLIMIT", env)
		return nil
	}
	n, _ := parseMemoryLimit(setting) // validated with the config
	mode := strings.ToLower(strings.TrimSpace(setting))
	switch {
	case mode == MemoryLimitOff:
		return nil
	case n > 0:
		return &memoryLimiter{prev: debug.SetMemoryLimit(n)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &memoryLimiter{cancel: cancel, prev: debug.SetMemoryLimit(autoMemoryFloor)}
	m.wg.Go(func() {
		t := time.NewTicker(memoryLimitInterval)
		defer t.Stop()
		m.adapt(ctx, t.C)
	})
	return m
}

// adapt sets the auto limit on every tick until ctx is done.
func (m *memoryLimiter) adapt(ctx context.Context, tick <-chan time.Time) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		heap := v(2) + v(3) + v(4) + v(5)
		var nonHeap uint64
		if total := v(1); total > heap {
			nonHeap = total - heap
		}
		debug.SetMemoryLimit(autoMemoryLimit(v(0), nonHeap))
	}
}

// Stop ends the adapting and restores the limit the agent found.
func (m *memoryLimiter) Stop() {
	if m == nil {
		return
	}
	if m.cancel != nil {
		m.cancel()
		m.wg.Wait()
	}
	debug.SetMemoryLimit(m.prev)
}
