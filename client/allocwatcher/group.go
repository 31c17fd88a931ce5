package allocwatcher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/drover-io/drover/client/allocdir"
)

// groupWatcher waits for several allocations (those a preempting
// allocation evicts). It migrates nothing.
type groupWatcher struct {
	watchers []PrevAllocWatcher
	waiting  atomic.Bool
}

var _ PrevAllocWatcher = (*groupWatcher)(nil)

// NewGroupAllocWatcher returns a watcher whose Wait returns when every
// watcher's Wait has returned; with no watchers it is a NoopPrevAllocWatcher.
func NewGroupAllocWatcher(watchers ...PrevAllocWatcher) PrevAllocWatcher {
	if len(watchers) == 0 {
		return NoopPrevAllocWatcher{}
	}
	return &groupWatcher{watchers: watchers}
}

// Wait waits for all watchers in parallel; it returns the first error, or
// ctx's error when ctx is done first.
func (g *groupWatcher) Wait(ctx context.Context) error {
	g.waiting.Store(true)
	defer g.waiting.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, w := range g.watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Wait(ctx); err != nil {
				once.Do(func() {
					first = fmt.Errorf("wait for preempted alloc %d of %d: %w", i+1, len(g.watchers), err)
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	return first
}

// IsWaiting reports whether Wait is blocked.
func (g *groupWatcher) IsWaiting() bool { return g.waiting.Load() }

// Migrate does nothing: preempted allocations' data is not kept.
func (g *groupWatcher) Migrate(context.Context, *allocdir.AllocDir) error { return nil }

// IsMigrating returns false.
func (g *groupWatcher) IsMigrating() bool { return false }
