package structs

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// dockerSharedNetworkKeys are the docker task options Docker refuses for a
// container that shares another's network (a bridge group's infra
// container).
var dockerSharedNetworkKeys = []string{"network_mode", "hostname", "dns_servers", "dns_search_domains", "dns_options", "extra_hosts"}

// portLabelDrivers are the drivers whose config names the ports it
// publishes by label (ports = ["http"]) and maps task-level ports with
// port_map; the labels must be declared in a network block.
var portLabelDrivers = []string{"docker", "podman"}

// networkErrors checks the network blocks of group tg (named name): one
// group block at most, a known mode, and for every port of the group's and
// its tasks' blocks a label declared once, a static port in 1-65535, a
// `to` in 0-65535 that means something, and no static port asked twice on
// one host network. The labels a docker task's ports and port_map name
// must be declared.
func (tg *TaskGroup) networkErrors(name string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(tg.Networks) > 1 {
		add("group %q: only one network block is allowed per group, found %d", name, len(tg.Networks))
	}
	mode := ""
	if len(tg.Networks) > 0 && tg.Networks[0] != nil {
		mode = tg.Networks[0].Mode
	}
	switch {
	case mode == "" || mode == NetworkModeHost || mode == NetworkModeNone || mode == NetworkModeBridge:
	case strings.HasPrefix(mode, NetworkModeCNIPrefix) && validCNIName(strings.TrimPrefix(mode, NetworkModeCNIPrefix)):
	case strings.HasPrefix(mode, NetworkModeCNIPrefix):
		add("group %q: network mode %q: a CNI network's name is letters, digits and . _ - (the name field of a conflist in the client's cni_config_dir)", name, mode)
	default:
		add("group %q: network mode %q is not supported: use %q, %q, %q or \"cni/<name>\"", name, mode, NetworkModeHost, NetworkModeNone, NetworkModeBridge)
	}
	if mode == NetworkModeBridge || strings.HasPrefix(mode, NetworkModeCNIPrefix) {
		for _, t := range tg.Tasks {
			switch t.Driver {
			case "podman":
				add("group %q, task %q: the %s driver cannot run in network mode %q: use the docker, exec or raw_exec driver in a bridge group, or network mode %q with the task's ports", name, t.Name, t.Driver, mode, NetworkModeHost)
			case "docker":
				// Its container joins the group's infra container's
				// network, whose settings Docker does not let it change.
				var set []string
				for _, k := range dockerSharedNetworkKeys {
					if _, ok := t.Config[k]; ok {
						set = append(set, k)
					}
				}
				if len(set) > 0 {
					add("group %q, task %q: config %s: the task joins the group's network namespace (mode %q), which sets these itself: remove them, and use the group network's hostname and dns block", name, t.Name, strings.Join(set, ", "), mode)
				}
			}
		}
		errs = append(errs, tg.Networks[0].namespaceErrors(name)...)
	}

	type declared struct {
		where string // "group" or `task "x"`
		port  Port
	}
	labels := map[string]declared{}
	var order []string
	check := func(where string, n *NetworkResource) {
		if n == nil {
			return
		}
		for _, p := range n.ReservedPorts {
			if p.Value < 1 || p.Value > MaxValidPort {
				add("group %q, %s network, port %q: static = %d is out of range 1-%d (leave static out for a dynamic port)", name, where, p.Label, p.Value, MaxValidPort)
			}
		}
		for _, p := range n.DynamicPorts {
			if p.Value != 0 {
				add("group %q, %s network, port %q: a dynamic port has no value (%d): use static = %d for a fixed port", name, where, p.Label, p.Value, p.Value)
			}
			if p.IgnoreCollision {
				add("group %q, %s network, port %q: ignore_collision needs a static port", name, where, p.Label)
			}
		}
		for _, p := range n.Ports() {
			if p.Label == "" {
				add("group %q, %s network: a port has no label: write port \"name\" { ... }", name, where)
				continue
			}
			if p.To < 0 || p.To > MaxValidPort {
				add("group %q, %s network, port %q: to = %d is out of range 0-%d", name, where, p.Label, p.To, MaxValidPort)
			}
			if prev, dup := labels[p.Label]; dup {
				add("group %q: port label %q is declared twice (%s and %s network): labels name NOMAD_PORT_<label> and must be unique", name, p.Label, prev.where, where)
				continue
			}
			labels[p.Label] = declared{where: where, port: p}
			order = append(order, p.Label)
		}
		if mode == NetworkModeNone && n.HasPorts() && where == "group" {
			add("group %q: network mode \"none\" has no network to give ports on: remove the ports or the mode", name)
		}
	}
	for _, n := range tg.Networks {
		check("group", n)
	}
	for _, t := range tg.Tasks {
		if t.Resources != nil {
			for _, n := range t.Resources.Networks {
				check(fmt.Sprintf("task %q", t.Name), n)
			}
		}
	}

	// Static ports: once per host network.
	static := map[string]string{} // host network + port -> label
	for _, l := range order {
		p := labels[l].port
		if p.Value == 0 || p.IgnoreCollision {
			continue
		}
		hn := p.HostNetwork
		if hn == "" {
			hn = DefaultHostNetwork
		}
		key := fmt.Sprintf("%s/%d", hn, p.Value)
		if other, dup := static[key]; dup {
			add("group %q: static port %d is asked twice on host network %q (ports %q and %q): an address has each port once", name, p.Value, hn, other, l)
			continue
		}
		static[key] = l
	}

	// Labels the drivers' configs name, and what `to` means.
	published := map[string]bool{}
	for _, t := range tg.Tasks {
		if !slices.Contains(portLabelDrivers, t.Driver) {
			continue
		}
		ports, ok := configStrings(t.Config["ports"])
		if t.Config["ports"] != nil && !ok {
			add("group %q, task %q: config ports must be a list of port labels, as ports = [\"http\"]", name, t.Name)
		}
		for _, l := range ports {
			if _, ok := labels[l]; !ok {
				add("group %q, task %q: config ports names port %q, which no network block declares: add port %q {} to the group's network block (declared: %s)", name, t.Name, l, l, labelList(order))
				continue
			}
			published[l] = true
		}
		for _, l := range configMapKeys(t.Config["port_map"]) {
			if _, ok := labels[l]; !ok {
				add("group %q, task %q: config port_map names port %q, which no network block declares (declared: %s)", name, t.Name, l, labelList(order))
			}
			published[l] = true
		}
	}
	if mode == "" || mode == NetworkModeHost {
		for _, l := range order {
			d := labels[l]
			if d.port.To == 0 || d.port.To == d.port.Value || published[l] {
				continue
			}
			add("group %q, %s network, port %q: to = %d means nothing in host network mode unless a docker task publishes the port (ports = [%q]): the task shares the host's network and listens on the host port; remove to", name, d.where, l, d.port.To, l)
		}
	}
	return errs
}

// configStrings returns v as a list of strings: a []string or a []any of
// strings (what a driver config decoded from JSON holds).
func configStrings(v any) ([]string, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case []string:
		return t, true
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// configMapKeys returns the keys of a map block of a driver config: an
// object, or a list of objects (a block as a job file decodes it).
func configMapKeys(v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k := range t {
			out = append(out, k)
		}
	case []any:
		for _, e := range t {
			out = append(out, configMapKeys(e)...)
		}
	}
	slices.Sort(out)
	return out
}

func labelList(labels []string) string {
	if len(labels) == 0 {
		return "none"
	}
	return strings.Join(labels, ", ")
}

// validCNIName reports whether name can name a CNI network (the CNI
// specification's rule for network names).
func validCNIName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// namespaceErrors checks what a bridge or CNI group sets of its namespace:
// dns servers are IP addresses, the hostname is a DNS name, and the cni
// args are KEY=VALUE pairs CNI_ARGS can carry.
func (n *NetworkResource) namespaceErrors(name string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if n.DNS != nil {
		for _, s := range n.DNS.Servers {
			if _, err := netip.ParseAddr(s); err != nil {
				add("group %q, network dns: servers: %q is not an IP address", name, s)
			}
		}
	}
	if n.Hostname != "" && !validHostname(n.Hostname) {
		add("group %q, network: hostname %q is not a host name (letters, digits and '-', dot-separated labels of at most 63 characters, 253 in all)", name, n.Hostname)
	}
	if n.CNI != nil {
		for _, k := range slices.Sorted(maps.Keys(n.CNI.Args)) {
			if k == "" || strings.ContainsAny(k, ";=") || strings.Contains(n.CNI.Args[k], ";") {
				add("group %q, network cni: args %q = %q: keys cannot be empty or hold ';' or '=', values cannot hold ';' (CNI_ARGS separates pairs with them)", name, k, n.CNI.Args[k])
			}
		}
	}
	return errs
}

// validHostname reports whether h is an RFC 1123 host name.
func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}
