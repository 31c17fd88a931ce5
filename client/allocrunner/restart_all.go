package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/structs"
)

// ReasonAllTasksRestart is the reason of a RestartAllTasks that gives none.
const ReasonAllTasksRestart = "User requested all tasks to restart"

// restartAllRequest is a RestartAllTasks call handed to runTasks.
type restartAllRequest struct {
	ev *structs.TaskEvent
	// done receives the outcome once the tasks have stopped (buffered 1).
	done chan error
}

// RestartAllTasks restarts every task of the allocation but the poststop
// ones, in lifecycle order and outside the restart policy (no attempt is
// counted), as `alloc restart -all-tasks` does: the tasks still running
// are stopped (the leader first, sidecars last) and held; then the
// prestart tasks run again, the non-sidecar ones to completion even if
// they had already completed; then the main tasks start again; then, once
// they are running, the poststart tasks. ev (nil: a Restart Signaled
// event with ReasonAllTasksRestart) is recorded on every task restarted.
//
// A request made while the allocation is starting its tasks is carried
// out once they have started (or ctx is done). It returns once the tasks
// have stopped; the lifecycle then proceeds under Run. It fails with a
// conflict when the allocation is not running (not started yet, stopping,
// or finished) or already restarting.
func (ar *AllocRunner) RestartAllTasks(ctx context.Context, ev *structs.TaskEvent) error {
	if ev == nil {
		ev = structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason(ReasonAllTasksRestart)
	}
	ar.mu.RLock()
	serving, restarting := ar.restartServing, ar.restarting
	ar.mu.RUnlock()
	switch {
	case serving == nil:
		return structs.NewError(structs.KindConflict, "allocation %s is not running: its tasks cannot be restarted", ar.id)
	case restarting:
		return structs.NewError(structs.KindConflict, "allocation %s is already restarting", ar.id)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("restart alloc %s: %w", ar.id, err)
	}
	req := &restartAllRequest{ev: ev, done: make(chan error, 1)}
	select {
	case ar.restartReqCh <- req:
	case <-serving:
		return structs.NewError(structs.KindConflict, "allocation %s is not running: its tasks cannot be restarted", ar.id)
	case <-ctx.Done():
		return fmt.Errorf("restart alloc %s: %w", ar.id, ctx.Err())
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("restart alloc %s: %w", ar.id, ctx.Err())
	}
}

// serveRestarts opens RestartAllTasks to requests, which waitTasks
// serves, until the returned function is called (once or more).
func (ar *AllocRunner) serveRestarts() (stop func()) {
	serving := make(chan struct{})
	ar.mu.Lock()
	ar.restartServing = serving
	ar.mu.Unlock()
	return sync.OnceFunc(func() {
		ar.mu.Lock()
		ar.restartServing = nil
		ar.mu.Unlock()
		close(serving)
	})
}

// waitTasks waits until the runners of the prestart, main and poststart
// tasks have all returned, carrying out the RestartAllTasks requests that
// come meanwhile. It runs in runTasks: the lifecycle has one owner.
func (ar *AllocRunner) waitTasks(ph *phases) {
	live := slices.Concat(ph.prestart, ph.main, ph.poststart)
wait:
	for {
		for _, tr := range live {
			// WaitCh is read at each pass: a restart gives a rerun
			// task's runner a new one.
			select {
			case <-tr.WaitCh():
			case req := <-ar.restartReqCh:
				ar.restartAll(ph, req)
				continue wait
			}
		}
		return
	}
}

// windingDown reports whether the tasks are being stopped for good (a
// stop, destroy, shutdown, or one of the group's kill rules fired), when a
// restart must not run tasks again. ar.mu must be held.
func (ar *AllocRunner) windingDown() bool {
	return ar.stopping || ar.shuttingDown || ar.leaderDead || ar.sibFailed || ar.mainDead
}

// restartAll carries out one RestartAllTasks request.
func (ar *AllocRunner) restartAll(ph *phases, req *restartAllRequest) {
	ar.mu.Lock()
	if ar.windingDown() {
		ar.mu.Unlock()
		req.done <- structs.NewError(structs.KindConflict, "allocation %s is stopping: its tasks cannot be restarted", ar.id)
		return
	}
	ar.restarting = true
	ar.mu.Unlock()
	defer func() {
		ar.mu.Lock()
		ar.restarting = false
		ar.mu.Unlock()
	}()
	ar.logger.Info("restarting all tasks")
	r := &allRestart{ar: ar, ph: ph, ev: req.ev, release: make(map[string]chan struct{}), rerun: make(map[string]bool)}
	if err := r.stop(); err != nil {
		req.done <- fmt.Errorf("restart alloc %s: %w", ar.id, err)
	} else {
		req.done <- nil
	}
	r.start()
}

// allRestart is one RestartAllTasks in progress.
type allRestart struct {
	ar *AllocRunner
	ph *phases
	ev *structs.TaskEvent

	mu sync.Mutex // guards release and rerun while stop runs
	// release holds, per task stopped and held, the channel that lets it
	// start again.
	release map[string]chan struct{}
	// rerun names the tasks whose run had ended with success: their
	// runners are re-armed and run again.
	rerun map[string]bool
}

// stop stops and holds the running tasks, in the order of a kill (leaders,
// then the other tasks in parallel, then sidecars in parallel), and
// notes the tasks that completed, to run them again.
func (r *allRestart) stop() error {
	p := r.ar.planKill(nil, false, nil)
	var mu sync.Mutex
	var errs []error
	for _, group := range [][]*taskrunner.TaskRunner{p.leaders, p.others, p.sidecars} {
		var wg sync.WaitGroup
		for _, tr := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.stopTask(tr); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// stopTask stops and holds one task, or notes it to run again when its
// run has ended.
func (r *allRestart) stopTask(tr *taskrunner.TaskRunner) error {
	waitCh := tr.WaitCh()
	if !isClosed(waitCh) {
		release := make(chan struct{})
		stopped, err := tr.RestartHeld(r.ev, release)
		if err == nil {
			r.mu.Lock()
			r.release[tr.Name()] = release
			r.mu.Unlock()
			select {
			case <-stopped:
			case <-waitCh: // it died, was killed or shut down instead
			}
			return nil
		}
		if tr.TaskState().State != structs.TaskStateDead {
			return err // being killed
		}
		// It died just now: its run is returning.
		<-waitCh
	}
	if st := tr.TaskState(); st.State == structs.TaskStateDead && !st.Failed {
		r.mu.Lock()
		r.rerun[tr.Name()] = true
		r.mu.Unlock()
	}
	return nil
}

// start runs the lifecycle again: prestart tasks (waiting for the
// non-sidecar ones to complete), main tasks, then, once those started,
// poststart tasks. It gives up, leaving held tasks to the kill under way,
// when the allocation winds down meanwhile.
func (r *allRestart) start() {
	ar := r.ar
	for _, tr := range r.ph.prestart {
		r.startTask(tr)
	}
	for _, tr := range r.ph.prestart {
		if !tr.Task().IsSidecar() {
			<-tr.WaitCh()
		}
	}
	ar.checkTasks()
	if r.windingDown() {
		return
	}
	before := make(map[string]int, len(r.ph.main))
	for _, tr := range r.ph.main {
		before[tr.Name()] = tr.Starts()
	}
	for _, tr := range r.ph.main {
		r.startTask(tr)
	}
	ar.waitStartedSince(r.ph.main, before)
	if r.windingDown() {
		return
	}
	for _, tr := range r.ph.poststart {
		r.startTask(tr)
	}
}

func (r *allRestart) windingDown() bool {
	r.ar.mu.RLock()
	defer r.ar.mu.RUnlock()
	return r.ar.windingDown()
}

// startTask releases a held task, or runs a completed one again.
func (r *allRestart) startTask(tr *taskrunner.TaskRunner) {
	if release, ok := r.release[tr.Name()]; ok {
		close(release)
		delete(r.release, tr.Name())
		return
	}
	if r.rerun[tr.Name()] {
		r.ar.rerunTask(tr, r.ev)
	}
}

// rerunTask re-arms the runner of a completed task and runs it again,
// unless the allocation is winding down. Both happen under ar.mu, like
// the marking of a kill, so a kill either sees the new run or comes
// before the check.
func (ar *AllocRunner) rerunTask(tr *taskrunner.TaskRunner, ev *structs.TaskEvent) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.windingDown() {
		return
	}
	if err := tr.Rearm(ev); err != nil {
		ar.logger.Warn("cannot run task again", "task", tr.Name(), "error", err)
		return
	}
	ar.trStarted[tr.Name()] = true
	go tr.Run() // waited for by Run, like every started runner
}

// waitStartedSince waits until every task of trs has started since its
// start count was before[name], or has died, or its runner has returned.
func (ar *AllocRunner) waitStartedSince(trs []*taskrunner.TaskRunner, before map[string]int) {
	for {
		changed := ar.changed()
		done := true
		for _, tr := range trs {
			if isClosed(tr.WaitCh()) || tr.Starts() > before[tr.Name()] || tr.TaskState().State == structs.TaskStateDead {
				continue
			}
			done = false
			break
		}
		if done {
			return
		}
		<-changed
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
