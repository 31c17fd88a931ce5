package allocrunner

import (
	"context"
	"sync"

	"github.com/drover-io/drover/structs"
)

// Destroy kills every task (poststop ones too), waits for Run to return,
// runs the destroy hooks (removing the alloc directory) and deletes the
// allocation's local state. It is best effort and idempotent, and works
// when Run was never called.
func (ar *AllocRunner) Destroy() {
	ar.destroyOnce.Do(func() {
		ar.mu.Lock()
		ar.destroyed = true
		ar.stopping = true
		claimed := ar.runClaimed
		ar.runClaimed = true
		ar.mu.Unlock()
		ar.prerunCancel()

		// Kill even if Run never ran: that starts the marked runners, which
		// converge to killed at once (or re-attach and kill restored tasks).
		ar.killTasks(structs.NewTaskEvent(structs.TaskKilling), true, nil)
		if claimed {
			<-ar.waitCh
		} else {
			close(ar.waitCh)
		}
		ar.stopUpdateLoop()

		ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
		defer cancel()
		ar.destroyHooks(ctx)
		if err := ar.stateDB.DeleteAllocationBucket(ar.id); err != nil {
			ar.logger.Error("could not delete alloc state", "error", err)
		}
		ar.broadcaster.Close()
		close(ar.destroyCh)
	})
	<-ar.destroyCh
}

// Shutdown stops the runner, leaving its tasks running for a later agent
// to recover, and waits for Run to return. It is idempotent.
func (ar *AllocRunner) Shutdown() {
	ar.shutdownOnce.Do(func() {
		ar.mu.Lock()
		ar.shuttingDown = true
		claimed := ar.runClaimed
		ar.runClaimed = true
		ar.mu.Unlock()
		ar.prerunCancel()

		var wg sync.WaitGroup
		for _, tr := range ar.tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr.Shutdown()
			}()
		}
		wg.Wait()
		ar.notifyChange() // wakes runTasks if it waits for tasks to start
		if claimed {
			<-ar.waitCh
		} else {
			close(ar.waitCh)
		}
		ar.stopUpdateLoop()

		ctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
		defer cancel()
		ar.shutdownHooks(ctx)
		close(ar.shutdownCh)
	})
	<-ar.shutdownCh
}

// stopUpdateLoop ends the updates, waiting for one being applied.
func (ar *AllocRunner) stopUpdateLoop() {
	ar.cancel()
	ar.updates.stop()
}
