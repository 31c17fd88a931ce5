package scheduler

import "github.com/drover-io/drover/structs"

// State is the read-only cluster state the scheduler reads. The server
// implements it over a state snapshot. Returned objects must not be changed.
type State interface {
	// JobByID returns a job, or nil when it does not exist (purged).
	JobByID(namespace, id string) (*structs.Job, error)
	// AllocsByJob returns all allocations of a job, of every version.
	AllocsByJob(namespace, jobID string) ([]*structs.Allocation, error)
	// AllocsByNode returns all allocations placed on a node.
	AllocsByNode(nodeID string) ([]*structs.Allocation, error)
	// NodeByID returns a node, or nil.
	NodeByID(id string) (*structs.Node, error)
	// ReadyNodes returns the nodes that may receive work: status ready,
	// eligible and not draining.
	ReadyNodes() ([]*structs.Node, error)
	// SchedulerConfig returns the cluster's scheduler configuration; nil
	// means the defaults.
	SchedulerConfig() (*structs.SchedulerConfiguration, error)
	// LatestDeployment returns the job's most recent deployment, or nil.
	LatestDeployment(namespace, jobID string) (*structs.Deployment, error)
}
