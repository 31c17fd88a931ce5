package server

import (
	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// schedState adapts a state snapshot to the scheduler's State interface.
type schedState struct {
	snap *state.StateSnapshot
}

var _ scheduler.State = schedState{}

func (s schedState) JobByID(namespace, id string) (*structs.Job, error) {
	return s.snap.JobByID(nil, namespace, id)
}

func (s schedState) AllocsByJob(namespace, jobID string) ([]*structs.Allocation, error) {
	return s.snap.AllocsByJob(nil, namespace, jobID)
}

func (s schedState) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return s.snap.AllocsByNode(nil, nodeID)
}

func (s schedState) NodeByID(id string) (*structs.Node, error) {
	return s.snap.NodeByID(nil, id)
}

func (s schedState) ReadyNodes() ([]*structs.Node, error) {
	nodes, err := s.snap.Nodes(nil)
	if err != nil {
		return nil, err
	}
	out := nodes[:0:0]
	for _, n := range nodes {
		if n.Ready() {
			out = append(out, n)
		}
	}
	return out, nil
}

func (s schedState) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	return s.snap.SchedulerConfig(nil)
}

func (s schedState) LatestDeployment(namespace, jobID string) (*structs.Deployment, error) {
	return s.snap.LatestDeploymentByJob(nil, namespace, jobID)
}
