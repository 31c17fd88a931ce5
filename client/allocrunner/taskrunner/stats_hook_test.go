package taskrunner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// fakeStatser hands out the streams pushed into it, one per TaskStats call,
// or err.
type fakeStatser struct {
	err     error
	streams chan chan *drivers.TaskResourceUsage

	mu    sync.Mutex
	calls int
}

func (f *fakeStatser) TaskStats(ctx context.Context, taskID string, _ time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	select {
	case ch := <-f.streams:
		return ch, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeStatser) callCount() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

// fakeClock is the stats hook's clock of readers.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// collecting reports whether a collection runs.
func (h *statsHook) collecting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur != nil
}

func TestStatsHookCollectsWhileRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeStatser{streams: make(chan chan *drivers.TaskResourceUsage, 3)}
		h := newStatsHook(f, time.Hour, slog.New(slog.DiscardHandler))
		clock := &fakeClock{now: time.Unix(1000, 0)}
		h.now = clock.Now
		retry := make(chan time.Time)
		h.after = func(d time.Duration) <-chan time.Time {
			if d == firstSampleWait {
				return nil // a first read waits for the first sample
			}
			return retry
		}

		h.start(context.Background(), "t1")
		if h.collecting() || f.callCount() != 0 {
			t.Fatal("the task is sampled before anyone reads its stats")
		}

		// The first read starts the collection and gets its first sample.
		first := make(chan *drivers.TaskResourceUsage)
		f.streams <- first
		got := make(chan *drivers.TaskResourceUsage)
		go func() { got <- h.Latest() }()
		first <- &drivers.TaskResourceUsage{Timestamp: 1, CPUPercent: 5}
		if u := <-got; u == nil || u.Timestamp != 1 {
			t.Fatalf("first read = %+v, want the first sample", u)
		}
		first <- nil // ignored
		first <- &drivers.TaskResourceUsage{Timestamp: 2, CPUPercent: 7, MemoryRSS: 100}
		settle(t, "the second sample", func() bool { u := h.Latest(); return u != nil && u.Timestamp == 2 })

		// The stream ends (a driver plugin restarting): the last sample stays
		// until the retry delay passes and a new stream delivers.
		second := make(chan *drivers.TaskResourceUsage)
		f.streams <- second
		close(first)
		retry <- time.Now()
		second <- &drivers.TaskResourceUsage{Timestamp: 3}
		settle(t, "a sample of the new stream", func() bool { u := h.Latest(); return u != nil && u.Timestamp == 3 })
		if n := f.callCount(); n != 2 {
			t.Errorf("TaskStats calls = %d, want 2", n)
		}

		// No reader for statsReaderIdle: the next sample ends the collection,
		// and the driver is asked nothing more.
		clock.Advance(statsReaderIdle + time.Second)
		second <- &drivers.TaskResourceUsage{Timestamp: 4}
		settle(t, "the collection to end", func() bool { return !h.collecting() })
		if n := f.callCount(); n != 2 {
			t.Errorf("TaskStats calls = %d after the readers left, want 2", n)
		}

		// A new reader starts it again, with a fresh sample.
		third := make(chan *drivers.TaskResourceUsage)
		f.streams <- third
		go func() { got <- h.Latest() }()
		third <- &drivers.TaskResourceUsage{Timestamp: 5}
		if u := <-got; u == nil || u.Timestamp != 5 {
			t.Fatalf("read after a quiet spell = %+v, want a fresh sample", u)
		}

		h.stop()
		if h.Latest() != nil || h.collecting() {
			t.Error("the sample or the collection outlived stop")
		}
		h.stop() // idempotent
	})
}

func TestStatsHookEnds(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		calls int // TaskStats calls after two reads; 0: at least two (retries)
	}{
		{"driver without stats", drivers.ErrNotSupported, 1},
		{"failing driver retries until stopped", errors.New("task not found"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeStatser{err: tt.err}
				h := newStatsHook(f, time.Millisecond, slog.New(slog.DiscardHandler))
				h.after = func(d time.Duration) <-chan time.Time {
					if d == firstSampleWait {
						return time.After(10 * time.Millisecond)
					}
					return time.After(d)
				}
				h.start(context.Background(), "t1")
				if h.Latest() != nil {
					t.Error("a sample without a stream")
				}
				if tt.calls > 0 {
					settle(t, "the collection to end by itself", func() bool { return !h.collecting() })
					if h.Latest() != nil || f.callCount() != tt.calls {
						t.Errorf("after the driver said it has no stats: %d TaskStats calls, want %d", f.callCount(), tt.calls)
					}
				} else {
					time.Sleep(time.Millisecond) // the retry delay (the interval)
					settle(t, "a retry", func() bool { return f.callCount() >= 2 })
				}
				h.stop()
				if h.Latest() != nil {
					t.Error("a sample after stop")
				}
			})
		})
	}
}

// TestTaskRunnerLatestStats: the mock driver's fixed sample is there while
// the task runs, and gone once it was killed.
func TestTaskRunnerLatestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Config: map[string]any{"run_for": "1h"}}
		h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
		if h.tr.LatestStats() != nil {
			t.Fatal("stats before the task ran")
		}
		go h.tr.Run()
		settle(t, "the mock driver's sample", func() bool {
			u := h.tr.LatestStats()
			return u != nil && u.CPUPercent == 1 && u.MemoryRSS == 1<<20
		})
		if err := h.tr.Kill(context.Background(), structs.NewTaskEvent(structs.TaskKilling)); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, "the runner to end", h.tr.WaitCh())
		if h.tr.LatestStats() != nil {
			t.Error("stats of a dead task")
		}
	})
}
