package structs

import (
	"maps"
	"slices"
	"strconv"
)

// Network modes of a group (TaskGroup.Networks[i].Mode).
const (
	// NetworkModeHost shares the node's network with the group's tasks:
	// the default.
	NetworkModeHost = "host"
	// NetworkModeNone gives each task a network namespace of its own
	// with only a loopback device (exec), or the driver's equivalent.
	NetworkModeNone = "none"
	// NetworkModeBridge gives the group one network namespace of its own,
	// shared by its tasks and wired by the client with CNI to its bridge
	// (client bridge_network_name, bridge_network_subnet); the group's
	// ports are published from the host.
	NetworkModeBridge = "bridge"
	// NetworkModeCNIPrefix followed by a network's name ("cni/mynet") is
	// bridge mode wired by the operator's CNI network of that name
	// (client cni_config_dir) instead of the client's bridge.
	NetworkModeCNIPrefix = "cni/"
)

// Port number limits and the client's default dynamic port range (Nomad's).
const (
	MaxValidPort          = 65535
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
)

// DefaultHostNetwork is the host network a port uses when it names none:
// the node's address (unique.network.ip-address).
const DefaultHostNetwork = "default"

// NetworkResource is a network block: a group's (TaskGroup.Networks) or,
// in older jobs, a task's (Resources.Networks). In a job it asks for
// ports; in an allocation (AllocatedSharedResources.Networks,
// AllocatedTaskResources.Networks) it is what the scheduler gave: IP is
// the host address and every port has its Value. The field names and
// JSON shape are Nomad's.
type NetworkResource struct {
	// Mode is NetworkModeHost, NetworkModeNone, NetworkModeBridge or
	// NetworkModeCNIPrefix+name; "" (the block sets no
	// mode) means host, though a driver may tell it from an explicit
	// "host" (docker then keeps its own default network).
	Mode string `json:",omitempty"`
	// Device and CIDR are the host interface and its network, IP the host
	// address, in an allocation.
	Device   string `json:",omitempty"`
	CIDR     string `json:",omitempty"`
	IP       string `json:",omitempty"`
	Hostname string `json:",omitempty"`
	// MBits is deprecated in Nomad and not scheduled; kept for the wire.
	MBits int `json:",omitempty"`
	// DNS and Hostname are the resolver config and hostname of a bridge
	// or CNI group's namespace, CNI its cni block (the plugins' CNI_ARGS).
	DNS *DNSConfig `json:",omitempty"`
	CNI *CNIConfig `json:",omitempty"`
	// ReservedPorts have a static host port (Value); DynamicPorts get one
	// from the node's dynamic range when placed.
	ReservedPorts []Port `json:",omitempty"`
	DynamicPorts  []Port `json:",omitempty"`
}

// Port is one port of a network block.
type Port struct {
	// Label names the port: NOMAD_PORT_<label>, docker's ports = [label].
	Label string
	// Value is the host port: static in ReservedPorts, chosen by the
	// scheduler for DynamicPorts (0 until placed).
	Value int
	// To is the port inside the task's network (docker's container
	// port); 0: the same as Value.
	To int `json:",omitempty"`
	// HostNetwork names the client host_network the port binds on;
	// "" is DefaultHostNetwork.
	HostNetwork string `json:",omitempty"`
	// IgnoreCollision lets a static port be given to several
	// allocations of a node (the tasks share it, e.g. SO_REUSEPORT).
	IgnoreCollision bool `json:",omitempty"`
}

// DNSConfig is a network block's dns block.
type DNSConfig struct {
	Servers  []string `json:",omitempty"`
	Searches []string `json:",omitempty"`
	Options  []string `json:",omitempty"`
}

// CNIConfig is a network block's cni block: Args are passed to every CNI
// plugin of the group's network as CNI_ARGS.
type CNIConfig struct {
	Args map[string]string `json:",omitempty"`
}

// Copy returns a deep copy of n.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.ReservedPorts = slices.Clone(n.ReservedPorts)
	c.DynamicPorts = slices.Clone(n.DynamicPorts)
	if n.DNS != nil {
		d := DNSConfig{
			Servers:  slices.Clone(n.DNS.Servers),
			Searches: slices.Clone(n.DNS.Searches),
			Options:  slices.Clone(n.DNS.Options),
		}
		c.DNS = &d
	}
	if n.CNI != nil {
		c.CNI = &CNIConfig{Args: maps.Clone(n.CNI.Args)}
	}
	return &c
}

// Ports returns the block's ports, static ones first.
func (n *NetworkResource) Ports() []Port {
	if n == nil {
		return nil
	}
	return append(slices.Clone(n.ReservedPorts), n.DynamicPorts...)
}

// HasPorts reports whether the block asks for (or holds) any port.
func (n *NetworkResource) HasPorts() bool {
	return n != nil && len(n.ReservedPorts)+len(n.DynamicPorts) > 0
}

// copyNetworks deep-copies a list of network blocks.
func copyNetworks(in []*NetworkResource) []*NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*NetworkResource, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}

// AllocatedPortMapping is one port the scheduler gave an allocation: the
// host port Value on HostIP, reached inside the task's network on To
// (0: Value).
type AllocatedPortMapping struct {
	Label           string
	Value           int
	To              int
	HostIP          string
	IgnoreCollision bool `json:",omitempty"`
}

// AllocatedPorts are an allocation's ports (AllocatedSharedResources.Ports).
type AllocatedPorts []AllocatedPortMapping

// Get returns the port labelled label.
func (p AllocatedPorts) Get(label string) (AllocatedPortMapping, bool) {
	for _, m := range p {
		if m.Label == label {
			return m, true
		}
	}
	return AllocatedPortMapping{}, false
}

// AllocNetworkStatus is what the client reports of an allocation's own
// network (a bridge or CNI network namespace): its interface, address and
// DNS. A host-mode allocation's has no interface or address, only the
// group's DNS, if any (as Nomad's). The client sets it; the server
// keeps the latest report (Allocation.NetworkStatus).
type AllocNetworkStatus struct {
	InterfaceName string     `json:",omitempty"`
	Address       string     `json:",omitempty"`
	AddressIPv6   string     `json:",omitempty"`
	DNS           *DNSConfig `json:",omitempty"`
}

// Copy returns a deep copy of s.
func (s *AllocNetworkStatus) Copy() *AllocNetworkStatus {
	if s == nil {
		return nil
	}
	c := *s
	if s.DNS != nil {
		n := (&NetworkResource{DNS: s.DNS}).Copy()
		c.DNS = n.DNS
	}
	return &c
}

// Address families of NodeNetworkAddress.Family.
const (
	NodeNetworkAFIPv4 = "ipv4"
	NodeNetworkAFIPv6 = "ipv6"
)

// NodeNetworkResource is one network interface of a node, as fingerprinted.
type NodeNetworkResource struct {
	// Mode is "host" for the node's own interfaces.
	Mode       string
	Device     string
	MacAddress string `json:",omitempty"`
	Speed      int    `json:",omitempty"`
	Addresses  []NodeNetworkAddress
}

// NodeNetworkAddress is one address of a node's interface. Alias names the
// host network it belongs to ("default" for the node's address, or a
// client host_network's name); an address in several host networks is
// listed once per network.
type NodeNetworkAddress struct {
	Family  string
	Alias   string
	Address string
	// ReservedPorts are ports not given to tasks on this address ("22,80,
	// 8000-8100"), from the host_network block.
	ReservedPorts string `json:",omitempty"`
	Gateway       string `json:",omitempty"`
}

// Copy returns a deep copy of n.
func (n *NodeNetworkResource) Copy() *NodeNetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.Addresses = slices.Clone(n.Addresses)
	return &c
}

// ClientHostNetworkConfig is a client's host_network block: the addresses
// of the node that jobs reach through host_network = Name.
type ClientHostNetworkConfig struct {
	Name string
	// CIDR selects the node's addresses in it; Interface the addresses of
	// one interface (a name, or a go-sockaddr template is not supported).
	CIDR          string `json:",omitempty"`
	Interface     string `json:",omitempty"`
	ReservedPorts string `json:",omitempty"`
}

// NodeReservedNetworkResources are the ports a node keeps from tasks
// (client reserved { reserved_ports }), on every address.
type NodeReservedNetworkResources struct {
	ReservedHostPorts string `json:",omitempty"`
}

// flatNetwork is a network block as plan diff fields: its mode and one
// field per port, "Port[http]" = "dynamic, to 80" or "static 9000".
func flatNetwork(n *NetworkResource) map[string]string {
	if n == nil {
		return nil
	}
	m := map[string]string{"Mode": n.Mode}
	for _, p := range n.Ports() {
		desc := "dynamic"
		if p.Value != 0 {
			desc = "static " + strconv.Itoa(p.Value)
		}
		if p.To != 0 {
			desc += ", to " + strconv.Itoa(p.To)
		}
		if p.HostNetwork != "" {
			desc += ", host network " + p.HostNetwork
		}
		if p.IgnoreCollision {
			desc += ", ignore collision"
		}
		m["Port["+p.Label+"]"] = desc
	}
	return m
}
