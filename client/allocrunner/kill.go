package allocrunner

import (
	"context"
	"slices"
	"sync"

	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/structs"
)

// killTasks kills the allocation's tasks: the leader first, then the
// other tasks in parallel, then the sidecars in parallel, so that a
// sidecar (a proxy, a log shipper) outlives the tasks it serves. ev is the
// reason given to each task (nil: a plain kill); poststop tasks are
// included only with includePoststop; only, when not nil, restricts the
// kill to the tasks it accepts. Task runners not yet started are marked
// and started, so they converge to killed at once.
func (ar *AllocRunner) killTasks(ev *structs.TaskEvent, includePoststop bool, only func(*taskrunner.TaskRunner) bool) {
	p := ar.planKill(ev, includePoststop, only)
	ar.mu.Lock()
	p.markUnstarted(ar)
	ar.mu.Unlock()
	p.run(ar)
}

// killPlan is a kill decided by planKill and carried out by run.
type killPlan struct {
	ev                        *structs.TaskEvent
	leaders, others, sidecars []*taskrunner.TaskRunner
}

// planKill picks the tasks to kill (see killTasks).
func (ar *AllocRunner) planKill(ev *structs.TaskEvent, includePoststop bool, only func(*taskrunner.TaskRunner) bool) *killPlan {
	p := &killPlan{ev: ev}
	for _, name := range ar.taskOrder {
		tr := ar.tasks[name]
		if (!includePoststop && tr.Task().IsPoststop()) || (only != nil && !only(tr)) {
			continue
		}
		switch {
		case tr.IsLeader():
			p.leaders = append(p.leaders, tr)
		case tr.Task().IsSidecar():
			p.sidecars = append(p.sidecars, tr)
		default:
			p.others = append(p.others, tr)
		}
	}
	return p
}

// markUnstarted marks the planned tasks whose runner has not started yet.
// ar.mu must be held, so that runTasks cannot start one meanwhile: once
// it returns, none of them will ever start.
func (p *killPlan) markUnstarted(ar *AllocRunner) {
	for _, tr := range slices.Concat(p.leaders, p.others, p.sidecars) {
		if !ar.trStarted[tr.Name()] {
			tr.RequestKill(p.reason())
		}
	}
}

// reason returns a copy of the kill's reason event, one per task.
func (p *killPlan) reason() *structs.TaskEvent {
	if p.ev == nil {
		return nil
	}
	c := *p.ev
	return &c
}

// run kills the planned tasks in order and waits until they are dead.
func (p *killPlan) run(ar *AllocRunner) {
	kill := func(tr *taskrunner.TaskRunner) {
		tr.RequestKill(p.reason())
		ar.startTaskRunner(tr)
		if err := tr.Kill(context.Background(), nil); err != nil {
			ar.logger.Warn("kill task failed", "task", tr.Name(), "error", err)
		}
	}
	for _, tr := range p.leaders {
		kill(tr)
	}
	for _, group := range [][]*taskrunner.TaskRunner{p.others, p.sidecars} {
		var wg sync.WaitGroup
		for _, tr := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kill(tr)
			}()
		}
		wg.Wait()
	}
}

// checkTasks applies the group's rules once: a dead leader kills the other
// tasks; a failed task kills its siblings; when the main tasks are dead,
// sidecars are killed. Each rule fires once; the kills run in goroutines
// tracked by killWG.
func (ar *AllocRunner) checkTasks() {
	states := make(map[string]*structs.TaskState, len(ar.tasks))
	for name, tr := range ar.tasks {
		states[name] = tr.TaskState()
	}
	var leaderDead bool
	var failed string
	mainsDead, anyMain := true, false
	for _, name := range ar.taskOrder {
		tr, st := ar.tasks[name], states[name]
		t := tr.Task()
		if t.IsMain() {
			anyMain = true
			if st.State != structs.TaskStateDead {
				mainsDead = false
			}
		}
		if st.State != structs.TaskStateDead {
			continue
		}
		if t.Leader {
			leaderDead = true
		}
		if st.Failed && !t.IsPoststop() && failed == "" {
			failed = name
		}
	}

	// The kill's targets are picked on the tasks' current state, under
	// ar.mu: a task run again by RestartAllTasks since the snapshot is
	// killed too.
	notDead := func(tr *taskrunner.TaskRunner) bool { return tr.TaskState().State != structs.TaskStateDead }

	// Deciding and marking the tasks not started yet happen under one lock:
	// a concurrent checkTasks (runTasks and the state loop both call it)
	// returns only once the kill is planned, so runTasks never starts a
	// task that is to be killed.
	ar.mu.Lock()
	if ar.stopping || ar.shuttingDown {
		ar.mu.Unlock()
		return
	}
	fireLeader := leaderDead && !ar.leaderDead
	ar.leaderDead = ar.leaderDead || leaderDead
	fireFailed := failed != "" && !ar.sibFailed
	ar.sibFailed = ar.sibFailed || failed != ""
	fireMain := anyMain && mainsDead && !ar.mainDead
	ar.mainDead = ar.mainDead || (anyMain && mainsDead)
	var p *killPlan
	switch {
	case fireFailed:
		ar.logger.Info("task failed: killing its siblings", "task", failed)
		p = ar.planKill(structs.NewTaskEvent(structs.TaskSiblingFailed).SetFailedSibling(failed), false, notDead)
	case fireLeader:
		ar.logger.Info("leader task dead: killing the other tasks")
		p = ar.planKill(structs.NewTaskEvent(structs.TaskLeaderDead), false, notDead)
	case fireMain:
		sidecars := func(tr *taskrunner.TaskRunner) bool { return tr.Task().IsSidecar() && notDead(tr) }
		p = ar.planKill(structs.NewTaskEvent(structs.TaskMainDead), false, sidecars)
	}
	if p != nil {
		p.markUnstarted(ar)
		ar.killWG.Add(1)
	}
	ar.mu.Unlock()

	if p != nil {
		go func() {
			defer ar.killWG.Done()
			p.run(ar)
		}()
	}
}
