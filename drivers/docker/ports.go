package docker

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
)

// Publishing ports. A task's ports = ["http"] publishes the host port the
// scheduler gave its allocation's port "http" (drivers.TaskConfig.Ports)
// to the container's port `to` (the same port when the group's block sets
// none), on the port's host address, for TCP and UDP as Nomad does. The
// older port_map { http = 8080 } publishes the labels it names to the
// ports it gives and sets their NOMAD_PORT_<label> to them, as Nomad's
// driver does. A label no port of the allocation has is an error.
//
// Only a network with Docker's port publishing can publish: in
// network_mode "host" the container listens on the host's ports already
// (a mapping to another port is an error), "none" has nothing to publish
// to (an error), and a container sharing another's network
// ("container:<id>") publishes nothing. Docker ignores bindings it cannot
// make (a daemon started with --bridge=none has no default bridge), so
// once the container started the driver checks that every binding exists
// and otherwise fails the task (checkPublished).

// publishedPort is one port the container publishes.
type publishedPort struct {
	label     string
	hostIP    string
	hostPort  int
	container int
}

// publishedPorts returns the ports a task publishes, in label order: those
// its ports names and those its port_map names.
func publishedPorts(cfg *drivers.TaskConfig, conf *TaskConfig) ([]publishedPort, error) {
	labels := slices.Clone(conf.Ports)
	for _, l := range slices.Sorted(maps.Keys(conf.PortMap)) {
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	var out []publishedPort
	for _, label := range labels {
		var m *drivers.PortMapping
		for _, p := range cfg.Ports {
			if p != nil && p.Label == label {
				m = p
				break
			}
		}
		if m == nil {
			return nil, fmt.Errorf("ports: port %q is not one of the allocation's ports (%s): declare it in the group's network block, port %q {}", label, portLabels(cfg.Ports), label)
		}
		pp := publishedPort{label: label, hostIP: m.HostIP, hostPort: m.Value, container: m.Value}
		if m.To > 0 {
			pp.container = m.To
		}
		if v, ok := conf.PortMap[label]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("port_map: %s = %q is not a port number (1-65535)", label, v)
			}
			pp.container = n
		}
		out = append(out, pp)
	}
	return out, nil
}

func portLabels(ports []*drivers.PortMapping) string {
	var ls []string
	for _, p := range ports {
		if p != nil {
			ls = append(ls, strconv.Quote(p.Label))
		}
	}
	if len(ls) == 0 {
		return "it has none"
	}
	return "it has " + strings.Join(ls, ", ")
}

// setPorts publishes the task's ports on the container cc, whose network
// mode is already set, and sets the NOMAD_PORT_<label> of the port_map
// labels in env, which it returns updated.
func setPorts(cc *containerCreate, cfg *drivers.TaskConfig, conf *TaskConfig, env map[string]string) (map[string]string, error) {
	ports, err := publishedPorts(cfg, conf)
	if err != nil || len(ports) == 0 {
		return env, err
	}
	if len(conf.PortMap) > 0 {
		env = maps.Clone(env)
		for _, p := range ports {
			if _, ok := conf.PortMap[p.label]; ok {
				env[taskenv.PortPrefix+taskenv.CleanName(p.label)] = strconv.Itoa(p.container)
			}
		}
	}
	mode := cc.HostConfig.NetworkMode
	switch {
	case mode.IsHost():
		for _, p := range ports {
			if p.container != p.hostPort {
				return nil, fmt.Errorf("port %q: network_mode \"host\" publishes no ports: the container listens on the host's port %d itself, not on %d; remove to/port_map or use the bridge network", p.label, p.hostPort, p.container)
			}
		}
		return env, nil
	case mode.IsNone():
		return nil, fmt.Errorf("ports %s: network_mode \"none\" has no network to publish them on: use the bridge network (network_mode unset or \"bridge\") or remove ports", quoted(ports))
	case mode.IsContainer():
		return env, nil // the other container's network publishes
	}
	cc.ExposedPorts = network.PortSet{}
	cc.HostConfig.PortBindings = network.PortMap{}
	for _, p := range ports {
		var ip netip.Addr
		if p.hostIP != "" {
			if ip, err = netip.ParseAddr(p.hostIP); err != nil {
				return nil, fmt.Errorf("port %q: host address %q: %w", p.label, p.hostIP, err)
			}
		}
		for _, proto := range []string{"tcp", "udp"} {
			cp, err := network.ParsePort(strconv.Itoa(p.container) + "/" + proto)
			if err != nil {
				return nil, fmt.Errorf("port %q: %w", p.label, err)
			}
			cc.ExposedPorts[cp] = struct{}{}
			cc.HostConfig.PortBindings[cp] = append(cc.HostConfig.PortBindings[cp],
				network.PortBinding{HostIP: ip, HostPort: strconv.Itoa(p.hostPort)})
		}
	}
	return env, nil
}

func quoted(ports []publishedPort) string {
	var ls []string
	for _, p := range ports {
		ls = append(ls, strconv.Quote(p.label))
	}
	return strings.Join(ls, ", ")
}

// errNotPublished says that Docker made none of a binding it was asked for.
var errNotPublished = errors.New("the Docker daemon did not publish the port")

// checkPublished verifies, on a started container, that Docker made every
// host binding the container asked for: a daemon whose default network
// has no bridge (dockerd --bridge=none) accepts bindings and makes none.
func checkPublished(asked network.PortMap, info *container.InspectResponse) error {
	if len(asked) == 0 {
		return nil
	}
	var got network.PortMap
	if info != nil && info.NetworkSettings != nil {
		got = info.NetworkSettings.Ports
	}
	for port, bindings := range asked {
		for _, want := range bindings {
			found := false
			for _, b := range got[port] {
				if b.HostPort == want.HostPort {
					found = true
					break
				}
			}
			if !found {
				mode := ""
				if info != nil && info.HostConfig != nil {
					mode = string(info.HostConfig.NetworkMode)
				}
				return fmt.Errorf("%w: container port %s to host port %s (network mode %q): the container's network has no port publishing; is the daemon's bridge network disabled (dockerd --bridge=none)? Set network_mode to a network that publishes, or use network_mode = \"host\"",
					errNotPublished, port, want.HostPort, mode)
			}
		}
	}
	return nil
}
