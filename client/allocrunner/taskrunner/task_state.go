package taskrunner

import (
	"time"

	"github.com/drover-io/drover/structs"
)

// EmitEvent records an event without changing the task's state.
func (tr *TaskRunner) EmitEvent(ev *structs.TaskEvent) {
	tr.updateState("", ev)
}

// updateState records a copy of ev (may be nil) and moves the task to
// newState ("" keeps the current one), persists the state and notifies
// the AllocRunner. ev itself is left untouched: callers may share it.
func (tr *TaskRunner) updateState(newState string, ev *structs.TaskEvent) {
	ev = ev.Copy()
	tr.persistMu.Lock()
	defer tr.persistMu.Unlock()

	now := tr.now()
	tr.mu.Lock()
	st := tr.state.Copy()
	if ev != nil {
		ev.PopulateDisplayMessage()
		st.Events = append(st.Events, ev)
		if n := len(st.Events); n > maxTaskEvents {
			st.Events = st.Events[n-maxTaskEvents:]
		}
		if ev.FailsTask {
			st.Failed = true
		}
		if ev.Type == structs.TaskRestarting {
			st.Restarts++
			st.LastRestart = now
		}
	}
	if newState != "" && newState != st.State {
		switch newState {
		case structs.TaskStateRunning:
			if st.StartedAt.IsZero() {
				st.StartedAt = now
			}
		case structs.TaskStateDead:
			st.FinishedAt = now
		}
		if st.State == structs.TaskStateDead {
			// Run again (Rearm): it is no longer finished.
			st.FinishedAt = time.Time{}
		}
		st.State = newState
	}
	tr.state = st
	close(tr.stateChanged)
	tr.stateChanged = make(chan struct{})
	snapshot := st.Copy()
	tr.mu.Unlock()

	if err := tr.stateDB.PutTaskState(tr.allocID, tr.taskName, snapshot); err != nil {
		tr.logger.Error("could not persist task state", "error", err)
	}
	tr.updater.TaskStateUpdated()
}
