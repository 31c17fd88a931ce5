package httpapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/structs"
)

// networks converts a group's network blocks. Modes "host" (the default,
// also for an unset mode, which is kept unset) and "none" are implemented;
// "bridge" and "cni/<name>" (the client's CNI networks) are kept as they
// are; others are refused. Ports are converted as they are;
// structs.Job.Validate checks them (labels, ranges, what `to` means).
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
	case mode == structs.NetworkModeBridge || strings.HasPrefix(mode, structs.NetworkModeCNIPrefix):
	default:
		c.errorf("%s: unknown network mode %q: use %q, %q, %q or \"cni/<name>\"", where, mode, structs.NetworkModeHost, structs.NetworkModeNone, structs.NetworkModeBridge)
		return nil
	}
	own := mode == structs.NetworkModeBridge || strings.HasPrefix(mode, structs.NetworkModeCNIPrefix)
	c.unsupportedNetworkFields(where, n, own)
	out := c.network(n)
	if own {
		// The group's own namespace: its resolver, hostname and CNI args.
		out.Hostname = n.Hostname
		if n.DNS != nil {
			out.DNS = &structs.DNSConfig{Servers: slices.Clone(n.DNS.Servers), Searches: slices.Clone(n.DNS.Searches), Options: slices.Clone(n.DNS.Options)}
		}
		if n.CNI != nil && len(n.CNI.Args) > 0 {
			out.CNI = &structs.CNIConfig{Args: maps.Clone(n.CNI.Args)}
		}
	}
	return []*structs.NetworkResource{out}
}

// taskNetworks converts the network block of a task's resources (older
// jobs): ports only, in the node's network.
func (c *converter) taskNetworks(where string, in []*api.NetworkResource) []*structs.NetworkResource {
	var out []*structs.NetworkResource
	for _, n := range in {
		if n == nil {
			continue
		}
		if n.Mode != "" && n.Mode != structs.NetworkModeHost {
			c.errorf("%s resources network: mode %q is a group setting: move the network block to the group", where, n.Mode)
			continue
		}
		c.unsupportedNetworkFields(where+" resources", n, false)
		out = append(out, c.network(n))
	}
	if len(out) > 1 {
		c.errorf("%s resources: only one network block is allowed per task, found %d", where, len(out))
		return nil
	}
	return out
}

// network copies a network block's mode and ports.
func (c *converter) network(n *api.NetworkResource) *structs.NetworkResource {
	ports := func(in []api.Port) []structs.Port {
		if len(in) == 0 {
			return nil
		}
		out := make([]structs.Port, len(in))
		for i, p := range in {
			out[i] = structs.Port{Label: p.Label, Value: p.Value, To: p.To, HostNetwork: p.HostNetwork, IgnoreCollision: p.IgnoreCollision}
		}
		return out
	}
	return &structs.NetworkResource{
		Mode:          n.Mode,
		ReservedPorts: ports(n.ReservedPorts),
		DynamicPorts:  ports(n.DynamicPorts),
	}
}

// unsupportedNetworkFields warns about the fields of a network block that
// only bridge or CNI networks use (own: the block is one, which uses
// them), or that Nomad no longer schedules.
func (c *converter) unsupportedNetworkFields(where string, n *api.NetworkResource, own bool) {
	var ignored []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"device", n.Device != ""},
		{"cidr", n.CIDR != ""},
		{"ip", n.IP != ""},
		{"dns", n.DNS != nil && !own},
		{"hostname", n.Hostname != "" && !own},
		{"mbits", n.MBits != nil && *n.MBits != 0},
		{"cni", n.CNI != nil && !own},
	} {
		if f.set {
			ignored = append(ignored, f.name)
		}
	}
	if len(ignored) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: network %s %s not supported by drover in host mode and %s ignored",
			where, strings.Join(ignored, ", "), plural(len(ignored), "is", "are"), plural(len(ignored), "was", "were")))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// portReferenceWarnings warns about ${NOMAD_*_<label>} references in the
// group's tasks (env, config) to port labels no network block declares:
// Nomad leaves them as they are, so the task would see the literal text.
func portReferenceWarnings(where string, tg *structs.TaskGroup) []string {
	declared := map[string]bool{}
	for _, n := range tg.Networks {
		for _, p := range n.Ports() {
			declared[taskenv.CleanName(p.Label)] = true
		}
	}
	for _, t := range tg.Tasks {
		if t.Resources != nil {
			for _, n := range t.Resources.Networks {
				for _, p := range n.Ports() {
					// A task's own ports, and another's as
					// NOMAD_PORT_<task>_<label>.
					declared[taskenv.CleanName(p.Label)] = true
					declared[taskenv.CleanName(t.Name+"_"+p.Label)] = true
				}
			}
		}
	}
	var out []string
	for _, t := range tg.Tasks {
		var refs []string
		for _, s := range taskStrings(t) {
			for _, label := range portRefs(s) {
				if !declared[label] && !slices.Contains(refs, label) {
					refs = append(refs, label)
				}
			}
		}
		for _, l := range refs {
			out = append(out, fmt.Sprintf("%s, task %q: ${NOMAD_PORT_%s} (or another port variable of %q) names a port no network block declares; it will not be replaced", where, t.Name, l, l))
		}
	}
	return out
}

// portVarPrefixes are the port variables, longest first so that
// NOMAD_HOST_PORT_x is not read as a label "x" of NOMAD_PORT_... twice.
var portVarPrefixes = []string{"NOMAD_HOST_ADDR_", "NOMAD_HOST_PORT_", "NOMAD_ALLOC_PORT_", "NOMAD_HOST_IP_", "NOMAD_ADDR_", "NOMAD_PORT_", "NOMAD_IP_"}

// portRefs returns the labels of the ${NOMAD_<port var>_<label>}
// references in s.
func portRefs(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return out
		}
		name := strings.TrimSpace(s[i+2 : i+j])
		s = s[i+j+1:]
		for _, p := range portVarPrefixes {
			if l, ok := strings.CutPrefix(name, p); ok && l != "" {
				out = append(out, l)
				break
			}
		}
	}
}

// taskStrings returns the strings of a task's env and driver config.
func taskStrings(t *structs.Task) []string {
	var out []string
	for k, v := range t.Env {
		out = append(out, k, v)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case []string:
			out = append(out, x...)
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(t.Config)
	return out
}
