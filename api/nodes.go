package api

import (
	"net/url"
	"sort"
	"time"
)

// Node statuses and scheduling eligibility.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"

	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Nodes is the node endpoints of the API.
type Nodes struct{ c *Client }

// Nodes returns the node endpoints.
func (c *Client) Nodes() *Nodes { return &Nodes{c: c} }

// Node is a client machine that runs allocations.
type Node struct {
	ID                string
	Datacenter        string
	Name              string
	HTTPAddr          string
	Attributes        map[string]string
	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Meta              map[string]string
	NodeClass         string
	// ComputedClass groups nodes equally feasible for any job (set by the
	// servers).
	ComputedClass string
	NodePool      string
	Drain         bool
	// DrainStrategy is the drain in progress; nil when not draining.
	DrainStrategy *DrainStrategy
	// LastDrain records the node's last drain.
	LastDrain             *DrainMetadata
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64 // Unix seconds
	Drivers               map[string]*DriverInfo
	// HostNetworks are the client's host_network blocks, by name.
	HostNetworks map[string]*HostNetworkInfo `json:",omitempty"`
	// HostVolumes are the host volumes the node offers, by name.
	HostVolumes map[string]*HostVolumeInfo `json:",omitempty"`
	Events      []*NodeEvent
	CreateIndex uint64
	ModifyIndex uint64
}

// NodeResources is what a node offers.
type NodeResources struct {
	Cpu     NodeCpuResources
	Memory  NodeMemoryResources
	Disk    NodeDiskResources
	Devices []*NodeDeviceResource `json:",omitempty"`
	// Networks is the node's address in Nomad's older form.
	Networks []*NetworkResource `json:",omitempty"`
	// NodeNetworks are the node's interfaces and addresses.
	NodeNetworks   []*NodeNetworkResource `json:",omitempty"`
	MinDynamicPort int                    `json:",omitempty"`
	MaxDynamicPort int                    `json:",omitempty"`
}

// NodeNetworkResource is one network interface of a node.
type NodeNetworkResource struct {
	Mode       string
	Device     string
	MacAddress string `json:",omitempty"`
	Speed      int    `json:",omitempty"`
	Addresses  []NodeNetworkAddress
}

// NodeNetworkAddress is one address of a node's interface; Alias names
// the host network it belongs to ("default" or a host_network's name).
type NodeNetworkAddress struct {
	Family        string
	Alias         string
	Address       string
	ReservedPorts string `json:",omitempty"`
	Gateway       string `json:",omitempty"`
}

// HostNetworkInfo is a client's host_network block.
type HostNetworkInfo struct {
	Name          string
	CIDR          string `json:",omitempty"`
	Interface     string `json:",omitempty"`
	ReservedPorts string `json:",omitempty"`
}

// NodeCpuResources is a node's CPU capacity.
type NodeCpuResources struct {
	CpuShares     int64 // total MHz
	TotalCpuCores uint16
}

// NodeMemoryResources is a node's memory in MB.
type NodeMemoryResources struct {
	MemoryMB int64
}

// NodeDiskResources is a node's disk for allocations, in MB.
type NodeDiskResources struct {
	DiskMB int64
}

// NodeReservedResources is what the operator keeps for the system.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedNetworkResources are the ports a node keeps from tasks.
type NodeReservedNetworkResources struct {
	ReservedHostPorts string
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct {
	CpuShares uint64
}

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct {
	MemoryMB uint64
}

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct {
	DiskMB uint64
}

// DriverInfo is a driver's fingerprint on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
	// MountsUnsupported says the driver cannot mount volumes into its
	// tasks (drover's own field).
	MountsUnsupported bool `json:",omitempty"`
}

// NodeEvent records something that happened to a node.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// NodeListStub is the summary of a node returned by GET /v1/nodes.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string `json:",omitempty"`
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*DriverInfo
	NodeResources         *NodeResources         `json:",omitempty"`
	ReservedResources     *NodeReservedResources `json:",omitempty"`
	CreateIndex           uint64
	ModifyIndex           uint64
}

// List returns the nodes, sorted by ID.
func (n *Nodes) List(q *QueryOptions) ([]*NodeListStub, *QueryMeta, error) {
	var resp []*NodeListStub
	qm, err := n.c.query("/v1/nodes", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(resp, func(i, j int) bool { return resp[i].ID < resp[j].ID })
	return resp, qm, nil
}

// Info returns one node by its full ID.
func (n *Nodes) Info(nodeID string, q *QueryOptions) (*Node, *QueryMeta, error) {
	var resp Node
	qm, err := n.c.query("/v1/node/"+url.PathEscape(nodeID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations returns the allocations placed on the node.
func (n *Nodes) Allocations(nodeID string, q *QueryOptions) ([]*Allocation, *QueryMeta, error) {
	var resp []*Allocation
	qm, err := n.c.query("/v1/node/"+url.PathEscape(nodeID)+"/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(resp, func(i, j int) bool { return resp[i].CreateIndex < resp[j].CreateIndex })
	return resp, qm, nil
}
