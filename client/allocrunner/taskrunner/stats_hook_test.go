package taskrunner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
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

func TestStatsHookKeepsLatestAndRetries(t *testing.T) {
	f := &fakeStatser{streams: make(chan chan *drivers.TaskResourceUsage, 2)}
	h := newStatsHook(f, time.Hour, slog.New(slog.DiscardHandler))
	retry := make(chan time.Time)
	h.after = func(time.Duration) <-chan time.Time { return retry }

	first := make(chan *drivers.TaskResourceUsage)
	f.streams <- first
	h.start(context.Background(), "t1")
	if h.Latest() != nil {
		t.Fatal("a sample before the driver sent one")
	}
	first <- &drivers.TaskResourceUsage{Timestamp: 1, CPUPercent: 5}
	first <- nil // ignored
	first <- &drivers.TaskResourceUsage{Timestamp: 2, CPUPercent: 7, MemoryRSS: 100}
	waitFor(t, "the second sample", func() bool { u := h.Latest(); return u != nil && u.Timestamp == 2 })

	// The stream ends (a driver plugin restarting): the last sample stays
	// until the retry delay passes and a new stream delivers.
	second := make(chan *drivers.TaskResourceUsage)
	f.streams <- second
	close(first)
	retry <- time.Now()
	second <- &drivers.TaskResourceUsage{Timestamp: 3}
	waitFor(t, "a sample of the new stream", func() bool { u := h.Latest(); return u != nil && u.Timestamp == 3 })
	if n := f.callCount(); n != 2 {
		t.Errorf("TaskStats calls = %d, want 2", n)
	}

	h.stop()
	if h.Latest() != nil {
		t.Error("the sample outlived stop")
	}
	h.stop() // idempotent
}

func TestStatsHookEnds(t *testing.T) {
	tests := []struct {
		name string
		err  error
		stop bool // whether stop is needed to end the goroutine
	}{
		{"driver without stats", drivers.ErrNotSupported, false},
		{"failing driver retries until stopped", errors.New("task not found"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeStatser{err: tt.err}
			h := newStatsHook(f, time.Millisecond, slog.New(slog.DiscardHandler))
			h.start(context.Background(), "t1")
			h.mu.Lock()
			done := h.done
			h.mu.Unlock()
			if !tt.stop {
				waitClosed(t, "the goroutine to end by itself", done)
			} else {
				waitFor(t, "a retry", func() bool { return f.callCount() >= 2 })
			}
			h.stop()
			if h.Latest() != nil {
				t.Error("a sample without a stream")
			}
		})
	}
}

// TestTaskRunnerLatestStats: the mock driver's fixed sample is there while
// the task runs, and gone once it was killed.
func TestTaskRunnerLatestStats(t *testing.T) {
	task := &structs.Task{Config: map[string]any{"run_for": "1h"}}
	h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
	if h.tr.LatestStats() != nil {
		t.Fatal("stats before the task ran")
	}
	go h.tr.Run()
	waitFor(t, "the mock driver's sample", func() bool {
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
}
