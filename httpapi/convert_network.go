package httpapi

import (
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// networks converts a group's network blocks. Modes "host" (the default,
// also for an unset mode, which is kept unset) and "none" are implemented; "bridge" and "cni/<name>" are
// refused, since the group would otherwise run with a network it did not
// ask for. Ports and the other fields are accepted with a warning: they
// are not allocated or applied yet.
func (c *converter) networks(where string, in []*api.NetworkResource) []*structs.NetworkResource {
	if len(in) == 0 {
		return nil
	}
	if len(in) > 1 {
		c.errorf("%s: only one network block is allowed per group, found %d", where, len(in))
		return nil
	}
	n := in[0]
	if n == nil {
		return nil
	}
	// An empty mode stays empty: it is host networking, but drivers
	// tell it from an explicit "host" (docker keeps its own default).
	mode := n.Mode
	switch {
	case mode == "" || mode == structs.NetworkModeHost || mode == structs.NetworkModeNone:
	case mode == "bridge" || strings.HasPrefix(mode, "cni/"):
		c.errorf("%s: network mode %s is not supported by drover yet: use mode %q or %q", where, mode, structs.NetworkModeHost, structs.NetworkModeNone)
		return nil
	default:
		c.errorf("%s: unknown network mode %q: use %q or %q", where, mode, structs.NetworkModeHost, structs.NetworkModeNone)
		return nil
	}
	if len(n.ReservedPorts) > 0 || len(n.DynamicPorts) > 0 {
		var labels []string
		for _, p := range append(append([]api.Port(nil), n.ReservedPorts...), n.DynamicPorts...) {
			labels = append(labels, p.Label)
		}
		c.warnings = append(c.warnings, fmt.Sprintf("%s: network ports (%s) are not yet allocated by drover and were ignored: tasks get no NOMAD_PORT_* variables",
			where, strings.Join(labels, ", ")))
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"device", n.Device != ""},
		{"cidr", n.CIDR != ""},
		{"ip", n.IP != ""},
		{"dns", n.DNS != nil},
		{"hostname", n.Hostname != ""},
		{"mbits", n.MBits != nil && *n.MBits != 0},
		{"cni", n.CNI != nil},
	} {
		if f.set {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: network %s is not supported by drover yet and was ignored", where, f.name))
		}
	}
	return []*structs.NetworkResource{{Mode: mode}}
}
