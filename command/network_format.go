package command

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

// formatAllocAddresses renders an allocation's ports as Nomad's `alloc
// status` does ("Allocation Addresses"): each port of the group as
// "*label", whether the scheduler picked it, and host address:port ->
// the port in the task's network. "" when the allocation has none.
func formatAllocAddresses(a *api.Allocation) string {
	ar := a.AllocatedResources
	if ar == nil || len(ar.Shared.Ports) == 0 {
		return ""
	}
	dynamic := map[string]bool{}
	mode := ""
	if len(ar.Shared.Networks) > 0 && ar.Shared.Networks[0] != nil {
		n := ar.Shared.Networks[0]
		mode = n.Mode
		for _, p := range n.DynamicPorts {
			dynamic[p.Label] = true
		}
	}
	var rows [][]string
	for _, p := range ar.Shared.Ports {
		addr := net.JoinHostPort(p.HostIP, strconv.Itoa(p.Value))
		if p.To > 0 {
			addr += fmt.Sprintf(" -> %d", p.To)
		}
		rows = append(rows, []string{"*" + p.Label, yesNo(dynamic[p.Label]), addr})
	}
	title := "Allocation Addresses"
	if mode != "" {
		title += fmt.Sprintf(" (mode = %q)", mode)
	}
	return "\n" + title + "\n" + formatTable([]string{"Label", "Dynamic", "Address"}, rows)
}

// formatNetworkStatus renders the allocation's own network (bridge or
// CNI mode) as its client reports it: interface, addresses and DNS; ""
// when it has none or an empty one (host mode without a dns block).
func formatNetworkStatus(a *api.Allocation) string {
	ns := a.NetworkStatus
	if ns == nil || (ns.InterfaceName == "" && ns.Address == "" && ns.AddressIPv6 == "" && ns.DNS == nil) {
		return ""
	}
	pairs := []kv{{"Interface", ns.InterfaceName}, {"Address", ns.Address}}
	if ns.AddressIPv6 != "" {
		pairs = append(pairs, kv{"Address (IPv6)", ns.AddressIPv6})
	}
	if d := ns.DNS; d != nil {
		pairs = append(pairs, kv{"DNS Servers", strings.Join(d.Servers, ", ")}, kv{"DNS Searches", strings.Join(d.Searches, ", ")}, kv{"DNS Options", strings.Join(d.Options, ", ")})
	}
	return "\nNetwork Status\n" + formatKV(pairs)
}

// taskAddresses returns a task's own (task-level) ports as "label:
// address:port", for its Task Resources row.
func taskAddresses(a *api.Allocation, task string) []string {
	ar := a.AllocatedResources
	if ar == nil || ar.Tasks[task] == nil {
		return nil
	}
	var out []string
	for _, n := range ar.Tasks[task].Networks {
		if n == nil {
			continue
		}
		for _, p := range append(slices.Clone(n.DynamicPorts), n.ReservedPorts...) {
			out = append(out, fmt.Sprintf("%s: %s", p.Label, net.JoinHostPort(n.IP, strconv.Itoa(p.Value))))
		}
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// formatNodeNetworks renders, for `node status -verbose`, the client's
// host networks (as Nomad's "Host Networks") and the node's interfaces
// and addresses with the host networks they belong to, its dynamic port
// range and reserved ports.
func formatNodeNetworks(n *api.Node) string {
	var b strings.Builder
	if len(n.HostNetworks) > 0 {
		var rows [][]string
		for _, name := range sortedKeys(n.HostNetworks) {
			hn := n.HostNetworks[name]
			rows = append(rows, []string{name, orNone(hn.CIDR), orNone(hn.Interface), orNone(hn.ReservedPorts)})
		}
		b.WriteString("\nHost Networks\n")
		b.WriteString(formatTable([]string{"Name", "CIDR", "Interface", "ReservedPorts"}, rows))
	}
	r := n.NodeResources
	if r == nil {
		return b.String()
	}
	if len(r.NodeNetworks) > 0 {
		var rows [][]string
		for _, nn := range r.NodeNetworks {
			if nn == nil {
				continue
			}
			for _, addr := range nn.Addresses {
				rows = append(rows, []string{nn.Device, addr.Address, addr.Alias, orNone(addr.ReservedPorts)})
			}
		}
		b.WriteString("\nNetwork Interfaces\n")
		b.WriteString(formatTable([]string{"Device", "Address", "Host Network", "Reserved Ports"}, rows))
	}
	var kvs []kv
	if r.MinDynamicPort > 0 || r.MaxDynamicPort > 0 {
		kvs = append(kvs, kv{"Dynamic Ports", fmt.Sprintf("%d-%d", r.MinDynamicPort, r.MaxDynamicPort)})
	}
	if rr := n.ReservedResources; rr != nil && rr.Networks.ReservedHostPorts != "" {
		kvs = append(kvs, kv{"Reserved Ports", rr.Networks.ReservedHostPorts})
	}
	if len(kvs) > 0 {
		b.WriteString("\nPorts\n")
		b.WriteString(formatKV(kvs))
	}
	return b.String()
}
