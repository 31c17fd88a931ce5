package taskrunner

import (
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
