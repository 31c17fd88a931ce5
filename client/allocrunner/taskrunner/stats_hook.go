package taskrunner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// DefaultStatsInterval is how often a running task's driver is asked for a
// resource usage sample.
const DefaultStatsInterval = time.Second

// taskStatser is the part of a driver the stats hook uses.
type taskStatser interface {
	TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error)
}

// statsHook consumes the driver's TaskStats stream while the task runs
// and keeps only the latest sample, which the stats endpoints read (no
// driver call per request). The run loop starts it when the task runs and
// stops it when waiting on the task ends; its one goroutine is owned by
// the hook and waited for by stop.
type statsHook struct {
	driver   taskStatser
	interval time.Duration
	// after is the clock of the retry delay.
	after  func(time.Duration) <-chan time.Time
	logger *slog.Logger

	mu sync.Mutex // guards the fields below
	// latest is the latest sample of the current run; nil: none yet.
	latest *drivers.TaskResourceUsage
	// cancel and done stop and wait for the collecting goroutine; nil
	// when none runs.
	cancel context.CancelFunc
	done   chan struct{}
}

func newStatsHook(driver taskStatser, interval time.Duration, logger *slog.Logger) *statsHook {
	if interval <= 0 {
		interval = DefaultStatsInterval
	}
	return &statsHook{driver: driver, interval: interval, after: time.After, logger: logger}
}

// Name identifies the hook.
func (h *statsHook) Name() string { return "stats" }

// start collects the samples of task taskID until stop or until parent is
// done; a collection already running is stopped first.
func (h *statsHook) start(parent context.Context, taskID string) {
	h.stop()
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	h.mu.Lock()
	h.cancel, h.done = cancel, done
	h.mu.Unlock()
	go func() {
		defer close(done)
		h.collect(ctx, taskID)
	}()
}

// stop ends the collection, waits for its goroutine and forgets the last
// sample (the task no longer runs).
func (h *statsHook) stop() {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.cancel, h.done = nil, nil
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	h.mu.Lock()
	h.latest = nil
	h.mu.Unlock()
}

// Latest returns the latest sample, nil when there is none; it must not be
// mutated.
func (h *statsHook) Latest() *drivers.TaskResourceUsage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest
}

// collect reads the driver's stream; when the stream fails or ends while
// the task still runs (a driver plugin restarting), it asks again after
// an interval. A driver without stats ends the collection.
func (h *statsHook) collect(ctx context.Context, taskID string) {
	for {
		ch, err := h.driver.TaskStats(ctx, taskID, h.interval)
		switch {
		case errors.Is(err, drivers.ErrNotSupported):
			h.logger.Debug("driver reports no task stats")
			return
		case err != nil:
			if ctx.Err() == nil {
				h.logger.Debug("task stats unavailable; retrying", "error", err)
			}
		default:
			h.consume(ctx, ch)
		}
		select {
		case <-ctx.Done():
			return
		case <-h.after(h.interval):
		}
	}
}

// consume keeps the stream's samples until it ends or ctx is done.
func (h *statsHook) consume(ctx context.Context, ch <-chan *drivers.TaskResourceUsage) {
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-ch:
			if !ok {
				return
			}
			if u == nil {
				continue
			}
			h.mu.Lock()
			h.latest = u
			h.mu.Unlock()
		}
	}
}
