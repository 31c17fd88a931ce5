package allocrunner

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/structs"
)

// PrevAllocWatcher waits for allocations a new one replaces and migrates
// their data (allocwatcher's watchers implement it).
type PrevAllocWatcher interface {
	Wait(ctx context.Context) error
	IsWaiting() bool
	Migrate(ctx context.Context, dest *allocdir.AllocDir) error
	IsMigrating() bool
}

// Descriptions of an allocation waiting in its prerun hooks.
const (
	DescWaitingPreempted = "waiting for preempted allocs to terminate"
	DescWaitingPrevious  = "waiting for previous alloc to terminate"
	DescMigrating        = "migrating data from previous alloc"
)

var _ prerunHook = (*allocWatcherHook)(nil)

// allocWatcherHook makes the allocation wait, before any task starts,
// until the allocations it preempts and the one it replaces have
// terminated, then moves the previous allocation's data into its alloc
// dir. The allocation stays pending meanwhile, its description saying
// what it waits for. Once done it persists that it is (the runner's
// PrevAllocMigrated), so that a runner restored after an agent restart
// neither waits nor migrates again.
type allocWatcherHook struct {
	ar        *AllocRunner
	prev      PrevAllocWatcher
	preempted PrevAllocWatcher
}

func newAllocWatcherHook(ar *AllocRunner, prev, preempted PrevAllocWatcher) *allocWatcherHook {
	return &allocWatcherHook{ar: ar, prev: noopIfNil(prev), preempted: noopIfNil(preempted)}
}

func noopIfNil(w PrevAllocWatcher) PrevAllocWatcher {
	if w == nil {
		return allocwatcher.NoopPrevAllocWatcher{}
	}
	return w
}

func isNoop(w PrevAllocWatcher) bool {
	_, ok := w.(allocwatcher.NoopPrevAllocWatcher)
	return ok
}

// Name returns "alloc_watcher".
func (*allocWatcherHook) Name() string { return "alloc_watcher" }

// Prerun waits for the preempted allocations, then for the previous one,
// then migrates its data.
func (h *allocWatcherHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	if isNoop(h.preempted) && isNoop(h.prev) {
		return nil
	}
	if h.ar.prevAllocMigrated() || h.ar.tasksRanBefore() {
		// Restored after an agent restart: it waited (and migrated)
		// then. The persisted flag covers a restart between the
		// migration and the first task start; started tasks cover state
		// written before the flag existed.
		return nil
	}
	defer h.ar.setPrerunDesc("")
	if !isNoop(h.preempted) {
		n := len(req.Alloc.PreemptedAllocations)
		h.ar.logger.Info("waiting for preempted allocs to terminate before starting tasks", "count", n)
		h.ar.setPrerunDesc(DescWaitingPreempted)
		if err := h.preempted.Wait(ctx); err != nil {
			return fmt.Errorf("wait for %d preempted allocs: %w", n, err)
		}
		h.ar.logger.Info("preempted allocs terminated", "count", n)
	}
	if isNoop(h.prev) {
		h.ar.setPrevAllocMigrated()
		return nil
	}
	prev := req.Alloc.PreviousAllocation
	h.ar.logger.Info("waiting for previous alloc to terminate before starting tasks", "previous_alloc", prev)
	h.ar.setPrerunDesc(DescWaitingPrevious)
	if err := h.prev.Wait(ctx); err != nil {
		return fmt.Errorf("wait for previous alloc %s: %w", prev, err)
	}
	h.ar.setPrerunDesc(DescMigrating)
	if err := h.prev.Migrate(ctx, h.ar.allocDir); err != nil {
		return fmt.Errorf("migrate data of previous alloc %s: %w", prev, err)
	}
	h.ar.setPrevAllocMigrated()
	h.ar.logger.Info("previous alloc terminated; starting tasks", "previous_alloc", prev)
	return nil
}

// tasksRanBefore reports whether any task has started before (its state
// was restored).
func (ar *AllocRunner) tasksRanBefore() bool {
	for _, tr := range ar.tasks {
		if st := tr.TaskState(); !st.StartedAt.IsZero() || st.State != structs.TaskStatePending {
			return true
		}
	}
	return false
}

// setPrerunDesc sets the description of the pending allocation and
// publishes it when it changed.
func (ar *AllocRunner) setPrerunDesc(desc string) {
	ar.mu.Lock()
	changed := ar.prerunDesc != desc
	ar.prerunDesc = desc
	ar.mu.Unlock()
	if changed {
		ar.publish()
	}
}

// WatchedRunner adapts the runner to allocwatcher.AllocRunnerMeta, for
// the watchers of allocations that replace or preempt this one.
func (ar *AllocRunner) WatchedRunner() allocwatcher.AllocRunnerMeta { return watchedRunner{ar} }

type watchedRunner struct{ ar *AllocRunner }

func (w watchedRunner) Alloc() *structs.Allocation         { return w.ar.Alloc() }
func (w watchedRunner) AllocDir() *allocdir.AllocDir       { return w.ar.AllocDir() }
func (w watchedRunner) Listen() allocwatcher.AllocListener { return w.ar.Listen() }
