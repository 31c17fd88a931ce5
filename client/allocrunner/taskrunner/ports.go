package taskrunner

import (
	"net"
	"strconv"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// allocPorts returns the ports of alloc as task's environment sees them:
// the group's (AllocatedSharedResources.Ports), the task's own task-level
// ports and the other tasks' task-level ports, by task.
func allocPorts(alloc *structs.Allocation, task string) (group, own []taskenv.Port, others map[string][]taskenv.Port) {
	ar := alloc.AllocatedResources
	if ar == nil {
		return nil, nil, nil
	}
	for _, p := range ar.Shared.Ports {
		group = append(group, taskenv.Port{Label: p.Label, HostIP: p.HostIP, Value: p.Value, To: p.To})
	}
	for name, tr := range ar.Tasks {
		if tr == nil {
			continue
		}
		for _, n := range tr.Networks {
			for _, p := range n.Ports() {
				tp := taskenv.Port{Label: p.Label, HostIP: n.IP, Value: p.Value}
				if name == task {
					own = append(own, tp)
					continue
				}
				if others == nil {
					others = map[string][]taskenv.Port{}
				}
				others[name] = append(others[name], tp)
			}
		}
	}
	return group, own, others
}

// driverPorts returns the ports a driver may publish for task: the
// group's, then the task's own task-level ones; nil without any.
func driverPorts(alloc *structs.Allocation, task string) []*drivers.PortMapping {
	group, own, _ := allocPorts(alloc, task)
	var out []*drivers.PortMapping
	for _, p := range append(group, own...) {
		out = append(out, &drivers.PortMapping{Label: p.Label, HostIP: p.HostIP, Value: p.Value, To: p.To})
	}
	return out
}

// Variables of the allocation's own address in bridge and CNI modes
// (Nomad's): followed by a group port's label, the allocation's address
// in its network namespace, and that address with the port inside it.
const (
	allocIPPrefix   = "NOMAD_ALLOC_IP_"
	allocAddrPrefix = "NOMAD_ALLOC_ADDR_"
)

// setAllocAddrs adds to env, for each of alloc's group ports, the
// allocation's address ip in its network namespace (NOMAD_ALLOC_IP_) and
// the address with the port the task listens on there, To or else the
// host port (NOMAD_ALLOC_ADDR_; NOMAD_ALLOC_PORT_ is set already).
func setAllocAddrs(env map[string]string, alloc *structs.Allocation, ip string) {
	group, _, _ := allocPorts(alloc, "")
	for _, p := range group {
		port := p.To
		if port == 0 {
			port = p.Value
		}
		label := taskenv.CleanName(p.Label)
		env[allocIPPrefix+label] = ip
		env[allocAddrPrefix+label] = net.JoinHostPort(ip, strconv.Itoa(port))
	}
}
