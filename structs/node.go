package structs

import (
	"maps"
	"time"
)

// Node statuses.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Node scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Node is a client machine that runs allocations.
type Node struct {
	ID                string
	SecretID          string `json:"-"`
	Datacenter        string
	Name              string
	HTTPAddr          string
	Attributes        map[string]string // fingerprinted: "cpu.arch", "kernel.name", "driver.raw_exec", ...
	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Meta              map[string]string
	NodeClass         string
	// ComputedClass groups nodes that any constraint reading no unique
	// value finds equally feasible (ComputeClass); set by the state store.
	ComputedClass string
	NodePool      string
	// Drain is whether DrainStrategy is set: the node is draining.
	Drain bool
	// DrainStrategy is the drain in progress (node_drain.go); the servers
	// own it, a client's registration keeps it.
	DrainStrategy *DrainStrategy
	// LastDrain records the node's last drain.
	LastDrain             *DrainMetadata
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64 // Unix seconds
	Drivers               map[string]*DriverInfo
	// HostNetworks are the client's host_network blocks, by name
	// (network.go).
	HostNetworks map[string]*ClientHostNetworkConfig `json:",omitempty"`
	// HostVolumes are the host volumes the node offers, by name (the
	// client's host_volume blocks).
	HostVolumes map[string]*ClientHostVolumeConfig
	Events      []*NodeEvent
	CreateIndex uint64
	ModifyIndex uint64
}

// NodeResources is what a node offers.
type NodeResources struct {
	Cpu     NodeCpuResources
	Memory  NodeMemoryResources
	Disk    NodeDiskResources
	Devices []*NodeDeviceResource
	// Networks is the node's address as Nomad's older API reports it:
	// one block with the fingerprinted interface (Device), its address
	// (IP) and CIDR.
	Networks []*NetworkResource `json:",omitempty"`
	// NodeNetworks are the node's interfaces and their addresses, each
	// tagged with the host networks it belongs to (network.go).
	NodeNetworks []*NodeNetworkResource `json:",omitempty"`
	// MinDynamicPort and MaxDynamicPort bound the ports the scheduler
	// picks for dynamic ports on this node; 0: the defaults (20000-32000).
	MinDynamicPort int `json:",omitempty"`
	MaxDynamicPort int `json:",omitempty"`
}

// NodeCpuResources is a node's CPU capacity.
type NodeCpuResources struct {
	CpuShares     int64 // total MHz
	TotalCpuCores uint16
}

// NodeMemoryResources is a node's memory capacity.
type NodeMemoryResources struct {
	MemoryMB int64
}

// NodeDiskResources is a node's disk capacity for alloc dirs.
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

// NodeReservedCpuResources is reserved CPU.
type NodeReservedCpuResources struct {
	CpuShares uint64
}

// NodeReservedMemoryResources is reserved memory.
type NodeReservedMemoryResources struct {
	MemoryMB uint64
}

// NodeReservedDiskResources is reserved disk.
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
	// tasks (raw_exec, which has no filesystem isolation): jobs whose
	// tasks of this driver have volume_mount blocks are refused. False
	// (the default, and what a driver that declares nothing gets) means
	// it can.
	MountsUnsupported bool `json:",omitempty"`
}

// Node events the servers record, as Nomad's.
const (
	// NodeEventRegistered is the event of a node's first registration.
	NodeEventRegistered = "Node registered"
	// NodeEventSubsystemCluster is the subsystem of the servers' events.
	NodeEventSubsystemCluster = "Cluster"
)

// NodeEvent records something that happened to a node.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// Ready reports whether the scheduler may place work on the node.
func (n *Node) Ready() bool {
	return n.Status == NodeStatusReady && !n.Drain && n.SchedulingEligibility != NodeSchedulingIneligible
}

// Copy returns a deep copy of the node.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Attributes = maps.Clone(n.Attributes)
	c.Meta = maps.Clone(n.Meta)
	if n.NodeResources != nil {
		r := *n.NodeResources
		if n.NodeResources.Devices != nil {
			r.Devices = make([]*NodeDeviceResource, len(n.NodeResources.Devices))
			for i, d := range n.NodeResources.Devices {
				r.Devices[i] = d.Copy()
			}
		}
		r.Networks = copyNetworks(n.NodeResources.Networks)
		if n.NodeResources.NodeNetworks != nil {
			r.NodeNetworks = make([]*NodeNetworkResource, len(n.NodeResources.NodeNetworks))
			for i, nn := range n.NodeResources.NodeNetworks {
				r.NodeNetworks[i] = nn.Copy()
			}
		}
		c.NodeResources = &r
	}
	if n.HostNetworks != nil {
		c.HostNetworks = make(map[string]*ClientHostNetworkConfig, len(n.HostNetworks))
		for k, v := range n.HostNetworks {
			hn := *v
			c.HostNetworks[k] = &hn
		}
	}
	if n.ReservedResources != nil {
		r := *n.ReservedResources
		c.ReservedResources = &r
	}
	if n.Drivers != nil {
		c.Drivers = make(map[string]*DriverInfo, len(n.Drivers))
		for k, v := range n.Drivers {
			d := *v
			d.Attributes = maps.Clone(v.Attributes)
			c.Drivers[k] = &d
		}
	}
	c.HostVolumes = CopyHostVolumes(n.HostVolumes)
	c.Events = append([]*NodeEvent(nil), n.Events...)
	c.DrainStrategy = n.DrainStrategy.Copy()
	c.LastDrain = n.LastDrain.Copy()
	return &c
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

// Stub returns the list form of the node.
func (n *Node) Stub() *NodeListStub {
	addr := n.HTTPAddr
	if i := lastColon(addr); i >= 0 {
		addr = addr[:i]
	}
	return &NodeListStub{
		Address:               addr,
		ID:                    n.ID,
		Datacenter:            n.Datacenter,
		Name:                  n.Name,
		NodeClass:             n.NodeClass,
		NodePool:              n.NodePool,
		Version:               n.Attributes["drover.version"],
		Drain:                 n.Drain,
		SchedulingEligibility: n.SchedulingEligibility,
		Status:                n.Status,
		StatusDescription:     n.StatusDescription,
		Drivers:               n.Drivers,
		CreateIndex:           n.CreateIndex,
		ModifyIndex:           n.ModifyIndex,
	}
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}
