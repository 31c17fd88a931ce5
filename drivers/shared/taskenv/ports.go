package taskenv

import (
	"net"
	"strconv"
)

// Prefixes of the port variables; each is followed by a port's label (or,
// for another task's task-level port, "<task>_<label>").
const (
	// PortPrefix: the port the task listens on, To if set, else the host
	// port.
	PortPrefix = "NOMAD_PORT_"
	// AllocPortPrefix: the same as PortPrefix, for group ports.
	AllocPortPrefix = "NOMAD_ALLOC_PORT_"
	// HostPortPrefix: the host port.
	HostPortPrefix = "NOMAD_HOST_PORT_"
	// IPPrefix and HostIPPrefix: the host address the port is on.
	IPPrefix     = "NOMAD_IP_"
	HostIPPrefix = "NOMAD_HOST_IP_"
	// AddrPrefix and HostAddrPrefix: host address and host port.
	AddrPrefix     = "NOMAD_ADDR_"
	HostAddrPrefix = "NOMAD_HOST_ADDR_"
)

// Port is a port given to the task's allocation: the host port Value on
// HostIP, reached inside the task's network on To (0: Value).
type Port struct {
	Label  string
	HostIP string
	Value  int
	To     int
}

// setPortEnv adds the port variables to env, as Nomad sets them:
//
//   - the task's own task-level ports (older jobs): NOMAD_IP_, NOMAD_ADDR_,
//     NOMAD_HOST_PORT_ and NOMAD_PORT_ (the host port; a driver that maps
//     ports, such as docker's port_map, sets its own NOMAD_PORT_);
//   - other tasks' task-level ports: NOMAD_ADDR_, NOMAD_IP_ and NOMAD_PORT_
//     followed by "<task>_<label>", with host values;
//   - the group's ports, which win over the above: every prefix, with
//     NOMAD_PORT_ and NOMAD_ALLOC_PORT_ the port in the task's network
//     (To, else the host port).
//
// Names are cleaned (CleanName) so that a label such as "http-alt" gives
// NOMAD_PORT_http_alt.
func setPortEnv(env map[string]string, in *Input) {
	set := func(prefix, label, v string) { env[prefix+CleanName(label)] = v }
	for _, p := range in.TaskPorts {
		host := strconv.Itoa(p.Value)
		set(IPPrefix, p.Label, p.HostIP)
		set(HostPortPrefix, p.Label, host)
		set(AddrPrefix, p.Label, net.JoinHostPort(p.HostIP, host))
		set(PortPrefix, p.Label, host)
	}
	for task, ports := range in.OtherTaskPorts {
		for _, p := range ports {
			host := strconv.Itoa(p.Value)
			label := task + "_" + p.Label
			set(AddrPrefix, label, net.JoinHostPort(p.HostIP, host))
			set(IPPrefix, label, p.HostIP)
			set(PortPrefix, label, host)
		}
	}
	for _, p := range in.Ports {
		host := strconv.Itoa(p.Value)
		addr := net.JoinHostPort(p.HostIP, host)
		inTask := host
		if p.To > 0 {
			inTask = strconv.Itoa(p.To)
		}
		set(AddrPrefix, p.Label, addr)
		set(HostAddrPrefix, p.Label, addr)
		set(IPPrefix, p.Label, p.HostIP)
		set(HostIPPrefix, p.Label, p.HostIP)
		set(HostPortPrefix, p.Label, host)
		set(PortPrefix, p.Label, inTask)
		set(AllocPortPrefix, p.Label, inTask)
	}
}

// CleanName makes s safe in a variable name: characters other than
// letters, digits, '_' and '.' become '_' (Nomad's rule for port labels
// and meta keys).
func CleanName(s string) string { return metaKey(s) }
