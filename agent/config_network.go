package agent

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/drover-io/drover/structs"
)

// networkErrors checks the client's port settings: reserved_ports and
// each host_network's are port lists ("22,80,8500-8600"), the dynamic
// range lies in 1-65535 with its minimum at most its maximum, and each
// host_network selects its addresses by a valid cidr or an interface.
func (c *ClientConfig) networkErrors() []error {
	var errs []error
	if _, err := structs.ParsePortRanges(c.Reserved.ReservedPorts); err != nil {
		errs = append(errs, fmt.Errorf("client.reserved.reserved_ports = %q: %w", c.Reserved.ReservedPorts, err))
	}
	lo, hi := c.dynamicRange()
	for _, v := range []struct {
		key string
		val int
	}{{"min_dynamic_port", c.MinDynamicPort}, {"max_dynamic_port", c.MaxDynamicPort}} {
		if v.val < 0 || v.val > structs.MaxValidPort {
			errs = append(errs, fmt.Errorf("client.%s = %d is out of range 1-%d", v.key, v.val, structs.MaxValidPort))
		}
	}
	if lo > hi {
		errs = append(errs, fmt.Errorf("client dynamic port range %d-%d is empty: min_dynamic_port must not be above max_dynamic_port", lo, hi))
	}
	for _, name := range slices.Sorted(maps.Keys(c.HostNetworks)) {
		hn := c.HostNetworks[name]
		where := fmt.Sprintf("client host_network %q", name)
		if hn.CIDR == "" && hn.Interface == "" {
			errs = append(errs, fmt.Errorf("%s selects no address: set cidr (\"10.0.0.0/8\") or interface (\"eth1\")", where))
		}
		if hn.CIDR != "" {
			if _, err := netip.ParsePrefix(hn.CIDR); err != nil {
				errs = append(errs, fmt.Errorf("%s: cidr %q is not a network: write it as 10.0.0.0/8", where, hn.CIDR))
			}
		}
		if strings.Contains(hn.Interface, "{{") {
			errs = append(errs, fmt.Errorf("%s: interface %q: go-sockaddr templates are not supported: name the interface", where, hn.Interface))
		}
		if _, err := structs.ParsePortRanges(hn.ReservedPorts); err != nil {
			errs = append(errs, fmt.Errorf("%s: reserved_ports = %q: %w", where, hn.ReservedPorts, err))
		}
		if name == structs.DefaultHostNetwork {
			errs = append(errs, fmt.Errorf("%s: %q names the node's own address (network_interface): choose another name", where, name))
		}
	}
	return errs
}

// dynamicRange returns the client's dynamic port range with the defaults.
func (c *ClientConfig) dynamicRange() (lo, hi int) {
	lo, hi = c.MinDynamicPort, c.MaxDynamicPort
	if lo == 0 {
		lo = structs.DefaultMinDynamicPort
	}
	if hi == 0 {
		hi = structs.DefaultMaxDynamicPort
	}
	return lo, hi
}

// hostNetworks returns the host_network blocks as the client takes them,
// by name.
func (c *ClientConfig) hostNetworks() []*structs.ClientHostNetworkConfig {
	var out []*structs.ClientHostNetworkConfig
	for _, name := range slices.Sorted(maps.Keys(c.HostNetworks)) {
		hn := c.HostNetworks[name]
		out = append(out, &structs.ClientHostNetworkConfig{Name: name, CIDR: hn.CIDR, Interface: hn.Interface, ReservedPorts: hn.ReservedPorts})
	}
	return out
}
