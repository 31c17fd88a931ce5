package client

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/drover-io/drover/structs"
)

// defaultLinkMBits is the speed reported for the node's address in the
// older Networks form when the interface's is unknown (Nomad's default).
const defaultLinkMBits = 1000

// prefixes returns the interface's addresses with their networks; an
// address known without one counts as a single-address network.
func (i *netInterface) prefixes() []netip.Prefix {
	if len(i.Prefixes) > 0 {
		return i.Prefixes
	}
	out := make([]netip.Prefix, 0, len(i.Addrs))
	for _, a := range i.Addrs {
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out
}

// nodeNetworks describes the node's interfaces for the scheduler: each
// interface that is up, with each usable address (not link-local) once
// per host network it belongs to. defaultIP (the node's address,
// unique.network.ip-address) is the "default" host network; a client
// host_network takes the addresses of its interface, or those in its
// CIDR. It also returns the node's address in Nomad's older Networks form
// and warnings for host networks that match no address. It is pure; a
// host network that cannot be read is an error.
func nodeNetworks(ifaces []netInterface, defaultIP string, hostNetworks []*structs.ClientHostNetworkConfig) ([]*structs.NodeNetworkResource, []*structs.NetworkResource, []string, error) {
	type hostNet struct {
		cfg  *structs.ClientHostNetworkConfig
		cidr netip.Prefix
		hits int
	}
	var hns []*hostNet
	for _, hn := range hostNetworks {
		h := &hostNet{cfg: hn}
		if hn.CIDR != "" {
			p, err := netip.ParsePrefix(hn.CIDR)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("client host_network %q: cidr %q is not a network (write it as 10.0.0.0/8): %w", hn.Name, hn.CIDR, err)
			}
			h.cidr = p.Masked()
		}
		if strings.Contains(hn.Interface, "{{") {
			return nil, nil, nil, fmt.Errorf("client host_network %q: interface %q: go-sockaddr templates are not supported: name the interface", hn.Name, hn.Interface)
		}
		if _, err := structs.ParsePortRanges(hn.ReservedPorts); err != nil {
			return nil, nil, nil, fmt.Errorf("client host_network %q: reserved_ports: %w", hn.Name, err)
		}
		hns = append(hns, h)
	}
	var out []*structs.NodeNetworkResource
	var legacy []*structs.NetworkResource
	for _, iface := range ifaces {
		if !iface.Up {
			continue
		}
		nn := &structs.NodeNetworkResource{Mode: structs.NetworkModeHost, Device: iface.Name, MacAddress: iface.MAC}
		for _, p := range iface.prefixes() {
			a := p.Addr().Unmap()
			if !a.IsValid() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
				continue
			}
			family := structs.NodeNetworkAFIPv4
			if a.Is6() {
				family = structs.NodeNetworkAFIPv6
			}
			add := func(alias, reserved string) {
				nn.Addresses = append(nn.Addresses, structs.NodeNetworkAddress{Family: family, Alias: alias, Address: a.String(), ReservedPorts: reserved})
			}
			if a.String() == defaultIP {
				add(structs.DefaultHostNetwork, "")
				legacy = append(legacy, &structs.NetworkResource{Mode: structs.NetworkModeHost, Device: iface.Name,
					CIDR: netip.PrefixFrom(a, a.BitLen()).String(), IP: a.String(), MBits: defaultLinkMBits})
			}
			for _, h := range hns {
				match := (h.cfg.Interface == "" || h.cfg.Interface == iface.Name) &&
					(!h.cidr.IsValid() || h.cidr.Contains(a))
				if match && (h.cfg.Interface != "" || h.cidr.IsValid()) {
					add(h.cfg.Name, h.cfg.ReservedPorts)
					h.hits++
				}
			}
		}
		if len(nn.Addresses) > 0 {
			out = append(out, nn)
		}
	}
	var warnings []string
	for _, h := range hns {
		if h.hits == 0 {
			warnings = append(warnings, fmt.Sprintf("client host_network %q matches no address of this node (interface %q, cidr %q): jobs asking for it are not placed here",
				h.cfg.Name, h.cfg.Interface, h.cfg.CIDR))
		}
	}
	slices.SortStableFunc(out, func(a, b *structs.NodeNetworkResource) int { return strings.Compare(a.Device, b.Device) })
	return out, legacy, warnings, nil
}

// setNodePorts sets the node's dynamic port range from the configuration.
func setNodePorts(r *structs.NodeResources, cfg *Config) {
	r.MinDynamicPort, r.MaxDynamicPort = cfg.MinDynamicPort, cfg.MaxDynamicPort
	if r.MinDynamicPort == 0 {
		r.MinDynamicPort = structs.DefaultMinDynamicPort
	}
	if r.MaxDynamicPort == 0 {
		r.MaxDynamicPort = structs.DefaultMaxDynamicPort
	}
}

// hostNetworksByName is the node's HostNetworks: the client's host_network
// blocks by name; nil without any.
func hostNetworksByName(hns []*structs.ClientHostNetworkConfig) map[string]*structs.ClientHostNetworkConfig {
	if len(hns) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostNetworkConfig, len(hns))
	for _, hn := range hns {
		c := *hn
		out[hn.Name] = &c
	}
	return out
}

// addrs returns the interface's addresses, from Prefixes when only they
// are known.
func (i *netInterface) addrs() []netip.Addr {
	if len(i.Addrs) > 0 || len(i.Prefixes) == 0 {
		return i.Addrs
	}
	out := make([]netip.Addr, 0, len(i.Prefixes))
	for _, p := range i.Prefixes {
		out = append(out, p.Addr())
	}
	return out
}
