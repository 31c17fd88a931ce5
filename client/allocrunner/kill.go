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
	var leaders, others, sidecars []*taskrunner.TaskRunner
	for _, name := range ar.taskOrder {
		tr := ar.tasks[name]
		if (!includePoststop && tr.Task().IsPoststop()) || (only != nil && !only(tr)) {
			continue
		}
		switch {
		case tr.IsLeader():
			leaders = append(leaders, tr)
		case tr.Task().IsSidecar():
			sidecars = append(sidecars, tr)
		default:
			others = append(others, tr)
		}
	}
	reason := func() *structs.TaskEvent {
		if ev == nil {
			return nil
		}
		c := *ev
		return &c
	}
	// Runners not started yet are marked at once, under ar.mu so that
	// runTasks cannot start one meanwhile: none of them starts while the
	// others are being killed in order.
	ar.mu.Lock()
	for _, tr := range slices.Concat(leaders, others, sidecars) {
		if !ar.trStarted[tr.Name()] {
			tr.RequestKill(reason())
		}
	}
	ar.mu.Unlock()
	kill := func(tr *taskrunner.TaskRunner) {
		tr.RequestKill(reason())
		ar.startTaskRunner(tr)
		if err := tr.Kill(context.Background(), nil); err != nil {
			ar.logger.Warn("kill task failed", "task", tr.Name(), "error", err)
		}
	}
	for _, tr := range leaders {
		kill(tr)
	}
	for _, group := range [][]*taskrunner.TaskRunner{others, sidecars} {
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
	ar.mu.Unlock()

	notDead := func(tr *taskrunner.TaskRunner) bool { return states[tr.Name()].State != structs.TaskStateDead }
	switch {
	case fireFailed:
		ar.logger.Info("task failed: killing its siblings", "task", failed)
		ar.goKill(structs.NewTaskEvent(structs.TaskSiblingFailed).SetFailedSibling(failed), notDead)
	case fireLeader:
		ar.logger.Info("leader task dead: killing the other tasks")
		ar.goKill(structs.NewTaskEvent(structs.TaskLeaderDead), notDead)
	case fireMain:
		sidecars := func(tr *taskrunner.TaskRunner) bool { return tr.Task().IsSidecar() && notDead(tr) }
		ar.goKill(structs.NewTaskEvent(structs.TaskMainDead), sidecars)
	}
}

func (ar *AllocRunner) goKill(ev *structs.TaskEvent, only func(*taskrunner.TaskRunner) bool) {
	ar.killWG.Add(1)
	go func() {
		defer ar.killWG.Done()
		ar.killTasks(ev, false, only)
	}()
}
