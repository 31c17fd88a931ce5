package command

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// fixturePortsAlloc is fixtureAlloc with a dynamic port mapped to 80, a
// static port and a task-level port.
func fixturePortsAlloc() *api.Allocation {
	a := fixtureAlloc()
	a.AllocatedResources.Shared.Networks = []*api.NetworkResource{{Mode: "host", IP: "127.0.0.1",
		DynamicPorts:  []api.Port{{Label: "http", Value: 23456, To: 80}},
		ReservedPorts: []api.Port{{Label: "admin", Value: 9000}}}}
	a.AllocatedResources.Shared.Ports = []api.PortMapping{
		{Label: "admin", Value: 9000, HostIP: "127.0.0.1"},
		{Label: "http", Value: 23456, To: 80, HostIP: "127.0.0.1"},
	}
	a.AllocatedResources.Tasks["greeter"].Networks = []*api.NetworkResource{{IP: "127.0.0.1",
		DynamicPorts: []api.Port{{Label: "rpc", Value: 25001}}, ReservedPorts: []api.Port{{Label: "legacy", Value: 8500}}}}
	return a
}

// fixtureBridgeAlloc is a bridge-mode allocation with its NetworkStatus.
func fixtureBridgeAlloc() *api.Allocation {
	a := fixturePortsAlloc()
	a.AllocatedResources.Shared.Networks[0].Mode = "bridge"
	a.AllocatedResources.Tasks["greeter"].Networks = nil
	a.NetworkStatus = &api.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.7", AddressIPv6: "fd00:a110:c8::7",
		DNS: &api.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc.local"}}}
	return a
}

// fixtureNetworkNode is a node with two interfaces, a host network and
// reserved ports.
func fixtureNetworkNode() *api.Node {
	n, _ := fixtureNode()
	n.HostNetworks = map[string]*api.HostNetworkInfo{"public": {Name: "public", CIDR: "203.0.113.0/24", ReservedPorts: "22"}}
	n.NodeResources.NodeNetworks = []*api.NodeNetworkResource{
		{Mode: "host", Device: "eth0", Addresses: []api.NodeNetworkAddress{
			{Family: "ipv4", Alias: "default", Address: "10.0.0.5"},
		}},
		{Mode: "host", Device: "eth1", Addresses: []api.NodeNetworkAddress{
			{Family: "ipv4", Alias: "public", Address: "203.0.113.9", ReservedPorts: "22"},
		}},
	}
	n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = 20000, 32000
	n.ReservedResources = &api.NodeReservedResources{Networks: api.NodeReservedNetworkResources{ReservedHostPorts: "22,8500-8600"}}
	return n
}

// TestFormatNetworkStatusHostMode: a host-mode allocation's status (no
// interface, no address) prints nothing, unless its group set a dns block.
func TestFormatNetworkStatusHostMode(t *testing.T) {
	a := fixturePortsAlloc()
	a.NetworkStatus = &api.AllocNetworkStatus{}
	if got := formatNetworkStatus(a); got != "" {
		t.Errorf("empty status printed %q, want nothing", got)
	}
	a.NetworkStatus.DNS = &api.DNSConfig{Servers: []string{"10.0.0.53"}}
	if got := formatNetworkStatus(a); !strings.Contains(got, "DNS Servers  = 10.0.0.53") {
		t.Errorf("status with dns printed %q, want its servers", got)
	}
}
