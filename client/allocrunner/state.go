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
	var failed, running, pending, dead bool
	for _, st := range states {
		switch st.State {
		case structs.TaskStateRunning:
			running = true
		case structs.TaskStatePending:
			pending = true
		case structs.TaskStateDead:
			if st.Failed {
				failed = true
			} else {
				dead = true
			}
		}
	}
	switch {
	case failed:
		return structs.AllocClientStatusFailed, DescFailed
	case running:
		return structs.AllocClientStatusRunning, DescRunning
	case pending:
		return structs.AllocClientStatusPending, DescPending
	case dead:
		return structs.AllocClientStatusComplete, DescComplete
	}
	return structs.AllocClientStatusPending, DescPending
}
