package allocrunner

import (
	"github.com/drover-io/drover/structs"
)

// State is an allocation's runtime state on the client.
type State struct {
	ClientStatus      string
	ClientDescription string
	// TaskStates are copies, by task name.
	TaskStates map[string]*structs.TaskState
	// DeploymentStatus is the client's health verdict during a deployment;
	// nil until it decides (and for allocs not in a deployment).
	DeploymentStatus *structs.AllocDeploymentStatus
	// DeploymentID is the deployment DeploymentStatus was decided for
	// (the servers drop a verdict for another deployment than the
	// alloc's: it was decided before an in-place update moved the alloc).
	DeploymentID string
}

// Client status descriptions.
const (
	DescFailed   = "Failed tasks"
	DescRunning  = "Tasks are running"
	DescPending  = "No tasks have started"
	DescComplete = "All tasks have completed"
)

// ClientStatus derives an allocation's client status from its tasks'
// states: failed if any task failed, else running if any runs, else
// pending if any has not started, else complete. It is a pure function.
func ClientStatus(states map[string]*structs.TaskState) (status, description string) {
	var acc statusAcc
	for _, st := range states {
		acc.add(st.State, st.Failed)
	}
	return acc.status()
}

// statusAcc accumulates task states into an allocation's client status
// (ClientStatus's rules).
type statusAcc struct{ failed, running, pending, dead bool }

func (a *statusAcc) add(state string, failed bool) {
	switch state {
	case structs.TaskStateRunning:
		a.running = true
	case structs.TaskStatePending:
		a.pending = true
	case structs.TaskStateDead:
		if failed {
			a.failed = true
		} else {
			a.dead = true
		}
	}
}

func (a statusAcc) status() (status, description string) {
	switch {
	case a.failed:
		return structs.AllocClientStatusFailed, DescFailed
	case a.running:
		return structs.AllocClientStatusRunning, DescRunning
	case a.pending:
		return structs.AllocClientStatusPending, DescPending
	case a.dead:
		return structs.AllocClientStatusComplete, DescComplete
	}
	return structs.AllocClientStatusPending, DescPending
}
