package drivers

import "context"

// NetworkIsolationSpec labels a driver that made the namespace sets
// (DriverNetworkManager.CreateNetwork), for its own tasks to find what
// holds it.
const (
	// NetworkLabelSandboxContainer is the ID of the docker container that
	// holds an allocation's network namespace (Nomad's label name).
	NetworkLabelSandboxContainer = "docker_sandbox_container_id"
)

// DriverNetworkManager is implemented by drivers whose tasks can join
// only a network namespace the driver made itself (docker: a container
// can join another container's network, not a namespace file). For an
// allocation in a bridge or CNI network mode with a task of such a
// driver, the client asks the driver to make the namespace (docker: an
// infra "pause" container) instead of making one itself, wires it with
// CNI, and every task of the group joins it, whatever its driver. It is
// optional: the client makes the namespace for drivers without it.
type DriverNetworkManager interface {
	// CreateNetwork makes the allocation's network namespace, or finds
	// the one made earlier (an agent restart) and returns it as it is.
	// The spec's Path is a file of the namespace the client can open
	// (/proc/<pid>/ns/net); its Labels are for the driver's own tasks.
	CreateNetwork(ctx context.Context, req *CreateNetworkRequest) (*NetworkIsolationSpec, error)
	// DestroyNetwork removes what CreateNetwork made for the allocation;
	// an allocation with nothing left is fine.
	DestroyNetwork(ctx context.Context, allocID string) error
	// Networks lists the allocations the driver holds namespaces for on
	// behalf of node nodeID (CreateNetworkRequest.NodeID), so that a
	// restarted client removes those of allocations it no longer runs
	// (left by a crash), and never another agent's on the same host.
	Networks(ctx context.Context, nodeID string) ([]string, error)
}

// CreateNetworkRequest asks a DriverNetworkManager for an allocation's
// network namespace.
type CreateNetworkRequest struct {
	AllocID string
	// NodeID is the node the allocation runs on: what the driver makes is
	// marked with it (Networks).
	NodeID string
	// Hostname is the group network's hostname ("" : the driver's
	// default); DNS its dns block (nil: the host's resolver config).
	Hostname string
	DNS      *DNSConfig
}

// DNSConfig is a group network's dns block: the resolv.conf of its tasks.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}
