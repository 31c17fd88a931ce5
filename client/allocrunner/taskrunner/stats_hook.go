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
// resource usage sample while someone reads the task's stats.
const DefaultStatsInterval = time.Second

// statsReaderIdle is how long the stats hook keeps collecting after the
// last read of a sample: a reader that polls (a UI, `alloc status -stats`
// run again) finds fresh samples at once, and a task nobody looks at
// costs its driver nothing.
const statsReaderIdle = time.Minute

// firstSampleWait bounds how long a read that starts a collection waits
// for its first sample.
const firstSampleWait = 2 * time.Second

// taskStatser is the part of a driver the stats hook uses.
type taskStatser interface {
	TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error)
}

// statsHook consumes the driver's TaskStats stream of the running task
// while someone reads its samples, and keeps only the latest, which the
// stats endpoints read. The run loop tells it when the task runs (start)
// and when waiting on the task ends (stop); the first Latest after that,
// or after a quiet spell, starts the collection and waits briefly for its
// first sample, and the collection ends statsReaderIdle after the last
// Latest. Nothing samples a task nobody looks at: for raw_exec and exec
// its shim then sleeps. Its goroutines are owned by the hook and waited
// for by stop.
type statsHook struct {
	driver   taskStatser
	interval time.Duration
	// after is the clock of the retry delay and of the wait for a first
	// sample; now tells when a reader was last seen.
	after  func(time.Duration) <-chan time.Time
	now    func() time.Time
	logger *slog.Logger

	wg sync.WaitGroup // collecting goroutines

	mu sync.Mutex // guards the fields below
	// parent and taskID are the running task's, set by start; parent is
	// nil when no task runs.
	parent context.Context
	taskID string
	// cur is the collection that runs; nil when none does.
	cur *collection
	// latest is cur's latest sample; nil: none yet.
	latest *drivers.TaskResourceUsage
	// lastRead is when Latest was last called.
	lastRead time.Time
	// unsupported is set once the driver said it has no stats for the
	// task: Latest then starts nothing.
	unsupported bool
}

// collection is one run of the collecting goroutine.
type collection struct {
	cancel context.CancelFunc
	// first is closed at the collection's first sample, or when it ends.
	first       chan struct{}
	firstClosed bool // guarded by statsHook.mu
}

// signalFirst closes c.first once; the hook's mu must be held.
func (c *collection) signalFirst() {
	if !c.firstClosed {
		c.firstClosed = true
		close(c.first)
	}
}

func newStatsHook(driver taskStatser, interval time.Duration, logger *slog.Logger) *statsHook {
	if interval <= 0 {
		interval = DefaultStatsInterval
	}
	return &statsHook{driver: driver, interval: interval, after: time.After, now: time.Now, logger: logger}
}

// Name identifies the hook.
func (h *statsHook) Name() string { return "stats" }

// start says that task taskID runs, until stop or until parent is done;
// a collection of an earlier run is stopped first. It samples nothing by
// itself.
func (h *statsHook) start(parent context.Context, taskID string) {
	h.stop()
	h.mu.Lock()
	h.parent, h.taskID = parent, taskID
	h.mu.Unlock()
}

// stop ends the collection, waits for its goroutines and forgets the task
// and its last sample (the task no longer runs).
func (h *statsHook) stop() {
	h.mu.Lock()
	if h.cur != nil {
		h.cur.cancel()
	}
	h.parent, h.taskID, h.cur, h.latest, h.unsupported = nil, "", nil, nil, false
	h.mu.Unlock()
	h.wg.Wait()
}

// Latest returns the latest sample, nil when there is none; it must not be
// mutated. When no collection runs, it starts one and waits up to
// firstSampleWait for its first sample.
func (h *statsHook) Latest() *drivers.TaskResourceUsage {
	h.mu.Lock()
	if h.parent == nil || h.unsupported {
		h.mu.Unlock()
		return nil
	}
	h.lastRead = h.now()
	if h.cur == nil {
		ctx, cancel := context.WithCancel(h.parent)
		c := &collection{cancel: cancel, first: make(chan struct{})}
		h.cur, h.latest = c, nil
		taskID := h.taskID
		h.wg.Go(func() { h.collect(ctx, taskID, c) })
	}
	latest, c := h.latest, h.cur
	h.mu.Unlock()
	if latest != nil {
		return latest
	}
	select {
	case <-c.first:
	case <-h.after(firstSampleWait):
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != c {
		return nil
	}
	return h.latest
}

// collect reads the driver's stream for c; when the stream fails or ends
// while the task still runs (a driver plugin restarting), it asks again
// after an interval. It ends when ctx is done, when the driver has no
// stats, or once no one has read a sample for statsReaderIdle.
func (h *statsHook) collect(ctx context.Context, taskID string, c *collection) {
	defer h.end(c)
	for {
		ch, err := h.driver.TaskStats(ctx, taskID, h.interval)
		switch {
		case errors.Is(err, drivers.ErrNotSupported):
			h.logger.Debug("driver reports no task stats")
			h.mu.Lock()
			h.unsupported = true
			h.mu.Unlock()
			return
		case err != nil:
			if ctx.Err() == nil {
				h.logger.Debug("task stats unavailable; retrying", "error", err)
			}
		default:
			if !h.consume(ctx, ch, c) {
				return
			}
		}
		if h.unread(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-h.after(h.interval):
		}
	}
}

// consume keeps the stream's samples until it ends (true) or until ctx is
// done or no one reads them any more (false).
func (h *statsHook) consume(ctx context.Context, ch <-chan *drivers.TaskResourceUsage, c *collection) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case u, ok := <-ch:
			if !ok {
				return true
			}
			if u == nil {
				continue
			}
			h.mu.Lock()
			if h.cur == c {
				h.latest = u
				c.signalFirst()
			}
			h.mu.Unlock()
			if h.unread(ctx) {
				return false
			}
		}
	}
}

// unread reports whether a collection is over: ctx is done, or no one has
// read a sample for statsReaderIdle.
func (h *statsHook) unread(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ctx.Err() != nil || h.now().Sub(h.lastRead) > statsReaderIdle
}

// end forgets c, if it is still the current collection, so that the next
// Latest starts another, and wakes a Latest waiting for its first sample.
func (h *statsHook) end(c *collection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.cancel()
	if h.cur == c {
		h.cur, h.latest = nil, nil
	}
	c.signalFirst()
}
