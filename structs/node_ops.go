package structs

// NodeEvaluateRequest asks for evaluations of the jobs a node affects (PUT
// /v1/node/:id/evaluate): those with allocations on it and every system
// job.
type NodeEvaluateRequest struct {
	NodeID string
	WriteRequest
}

// NodePurgeRequest removes a node from the cluster state (PUT
// /v1/node/:id/purge): its allocations that still run are marked lost
// and the jobs it affected are evaluated. A purged node's client that is
// still alive registers again at its next heartbeat.
type NodePurgeRequest struct {
	NodeID string
	WriteRequest
}
