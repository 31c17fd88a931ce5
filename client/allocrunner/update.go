package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/structs"
)

// Update hands a new server-sent version of the allocation to the runner.
// It never blocks on the runner: a pending, unprocessed version is
// replaced, since only the latest matters. Updates are processed once Run
// has been called.
func (ar *AllocRunner) Update(alloc *structs.Allocation) {
	ar.updateMu.Lock()
	ar.pendingUpdate = alloc
	ar.updateMu.Unlock()
	ar.updates.poke()
}

// ApplyUpdate applies a new server-sent version synchronously, returning
// once it is applied (for a stop: once the tasks are killed). The Client
// uses Update; ApplyUpdate exists for tests and benchmarks that compare
// with a serialized update path. Do not mix it with Update on one runner.
func (ar *AllocRunner) ApplyUpdate(alloc *structs.Allocation) { ar.handleUpdate(alloc) }

// applyUpdate applies the pending update, if any, unless the runner is
// destroyed or shut down: the update worker's run.
func (ar *AllocRunner) applyUpdate() {
	ar.updateMu.Lock()
	alloc := ar.pendingUpdate
	ar.pendingUpdate = nil
	ar.updateMu.Unlock()
	if alloc == nil || ar.ctx.Err() != nil {
		return
	}
	ar.handleUpdate(alloc)
}

// handleUpdate applies one update: a stop or evict kills the tasks (and
// runs no update hooks); anything else runs the update hooks and passes
// the alloc to the TaskRunners.
func (ar *AllocRunner) handleUpdate(alloc *structs.Allocation) {
	ar.mu.Lock()
	if alloc.AllocModifyIndex < ar.alloc.AllocModifyIndex {
		ar.mu.Unlock()
		ar.logger.Debug("ignoring stale alloc update", "index", alloc.AllocModifyIndex)
		return
	}
	ar.alloc = alloc
	ar.mu.Unlock()
	if err := ar.stateDB.PutAllocation(alloc); err != nil {
		ar.logger.Error("could not persist alloc", "error", err)
	}
	for _, tr := range ar.tasks {
		tr.Update(alloc)
	}
	if alloc.ServerTerminalStatus() {
		ar.logger.Info("alloc stopped by the server: killing tasks", "desired_status", alloc.DesiredStatus)
		ar.stop(false)
		ar.publish()
		return
	}
	ar.update(ar.ctx, alloc)
	ar.publish()
}

// RestartTask restarts one running task, outside its restart policy.
func (ar *AllocRunner) RestartTask(ctx context.Context, task string, ev *structs.TaskEvent) error {
	tr, ok := ar.tasks[task]
	if !ok {
		return structs.NotFound("task", task)
	}
	return tr.Restart(ctx, ev)
}

// RestartAll restarts every running task in place, outside the restart
// policy (`alloc restart` naming no task): tasks that completed, such as
// prestart tasks, are not run again; RestartAllTasks does that.
func (ar *AllocRunner) RestartAll(ctx context.Context, ev *structs.TaskEvent) error {
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, tr := range ar.tasks {
		if tr.TaskState().State != structs.TaskStateRunning {
			continue
		}
		wg.Add(1)
		go func(tr *taskrunner.TaskRunner) {
			defer wg.Done()
			if err := tr.Restart(ctx, ev); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(tr)
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("restart alloc %s: %v", ar.id, errs)
	}
	return nil
}

// SignalTask sends a signal to one task, or to every running task when
// task is "": a failure for one task does not stop the others, and the
// failures are returned together.
func (ar *AllocRunner) SignalTask(ctx context.Context, task, signal string) error {
	if task != "" {
		tr, ok := ar.tasks[task]
		if !ok {
			return structs.NotFound("task", task)
		}
		return tr.Signal(ctx, signal)
	}
	var errs []error
	for _, name := range ar.taskOrder {
		tr := ar.tasks[name]
		if tr.TaskState().State != structs.TaskStateRunning {
			continue
		}
		if err := tr.Signal(ctx, signal); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
