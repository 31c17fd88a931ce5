package allocrunner

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/structs"
)

// groupServiceOwner is the owner part of a group service's registration ID
// (a task service's is its task's name).
func groupServiceOwner(group string) string { return "group-" + group }

// serviceInstance is one service of the allocation as it should be
// registered now: the registration and what its checks need.
type serviceInstance struct {
	reg     *structs.ServiceRegistration
	service *structs.Service
	// task is the task whose state decides the instance (a group
	// service's: "", any main task).
	task string
	// env is the environment interpolations used (checks' too).
	env map[string]string
}

// serviceInputs is what desiredServices decides from.
type serviceInputs struct {
	alloc *structs.Allocation
	node  *structs.Node
	// states are the tasks' states; envs the environment of each task's
	// current invocation (nil when it has none).
	states map[string]*structs.TaskState
	envs   map[string]map[string]string
	// stopping: the allocation is being stopped, nothing stays registered.
	stopping bool
}

// desiredServices returns the instances the allocation should have
// registered now, by registration ID: a task's services while the task
// runs, the group's while any of its main tasks runs. An instance whose
// address cannot be resolved is left out and reported in errs. It is
// pure.
func desiredServices(in serviceInputs) (map[string]*serviceInstance, []error) {
	out := map[string]*serviceInstance{}
	if in.stopping || in.alloc == nil || in.alloc.Job == nil {
		return out, nil
	}
	tg := in.alloc.Job.LookupTaskGroup(in.alloc.TaskGroup)
	if tg == nil {
		return out, nil
	}
	var errs []error
	running := func(task string) bool {
		st := in.states[task]
		return st != nil && st.State == structs.TaskStateRunning
	}
	groupEnv, groupRunning := map[string]string(nil), false
	for _, t := range tg.Tasks {
		if t.IsMain() && running(t.Name) {
			groupRunning = true
			if groupEnv == nil {
				groupEnv = in.envs[t.Name]
			}
		}
	}
	add := func(owner, task string, s *structs.Service, env map[string]string) {
		inst, err := instance(in, owner, task, s, env)
		if err != nil {
			errs = append(errs, err)
			return
		}
		out[inst.reg.ID] = inst
	}
	if groupRunning {
		for _, s := range tg.Services {
			if s != nil && s.Provider == structs.ServiceProviderNomad {
				add(groupServiceOwner(tg.Name), "", s, groupEnv)
			}
		}
	}
	for _, t := range tg.Tasks {
		if !running(t.Name) {
			continue
		}
		for _, s := range t.Services {
			if s != nil && s.Provider == structs.ServiceProviderNomad {
				add(t.Name, t.Name, s, in.envs[t.Name])
			}
		}
	}
	return out, errs
}

// instance resolves one service: its name and tags interpolated with env
// and the node's attributes, its address and port.
func instance(in serviceInputs, owner, task string, s *structs.Service, env map[string]string) (*serviceInstance, error) {
	var attrs, meta map[string]string
	if in.node != nil {
		attrs = taskenv.NodeAttrs(&taskenv.Input{
			NodeAttrs: in.node.Attributes, NodeID: in.node.ID, NodeName: in.node.Name,
			Datacenter: in.node.Datacenter, NodeClass: in.node.NodeClass,
		})
		meta = in.node.Meta
	}
	interp := func(v string) string { return taskenv.Interpolate(v, env, attrs, meta) }
	name := interp(s.Name)
	tags := s.Tags
	if ds := in.alloc.DeploymentStatus; ds != nil && ds.Canary && len(s.CanaryTags) > 0 {
		tags = s.CanaryTags
	}
	var outTags []string
	for _, t := range tags {
		outTags = append(outTags, interp(t))
	}
	addr, port, err := serviceAddress(in.alloc, in.node, task, interp(s.PortLabel), s.AddressMode)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", name, err)
	}
	if s.Address != "" {
		addr = interp(s.Address)
	}
	reg := &structs.ServiceRegistration{
		ID:          structs.ServiceRegistrationID(in.alloc.ID, owner, name, s.PortLabel),
		ServiceName: name,
		Namespace:   in.alloc.Namespace,
		JobID:       in.alloc.JobID,
		AllocID:     in.alloc.ID,
		Tags:        outTags,
		Address:     addr,
		Port:        port,
	}
	if in.node != nil {
		reg.NodeID, reg.Datacenter = in.node.ID, in.node.Datacenter
	}
	return &serviceInstance{reg: reg, service: s, task: task, env: maps.Clone(env)}, nil
}

// serviceAddress resolves a port label (or number) of the allocation to
// the address and port to register, per address mode: auto and host give
// the host address and port; alloc and driver the port inside the
// allocation's network (its "to" port), on the host address, which is
// the allocation's own in host networking (drover's only shared mode). No
// label gives the node's address and port 0.
func serviceAddress(alloc *structs.Allocation, node *structs.Node, task, label, mode string) (string, int, error) {
	nodeIP := ""
	if node != nil {
		nodeIP = node.Attributes["unique.network.ip-address"]
	}
	if label == "" {
		return nodeIP, 0, nil
	}
	if n, err := strconv.Atoi(label); err == nil {
		return nodeIP, n, nil
	}
	m, ok := findPort(alloc, task, label)
	if !ok {
		return "", 0, fmt.Errorf("port %q is not a port of the allocation", label)
	}
	addr := m.HostIP
	if addr == "" {
		addr = nodeIP
	}
	switch mode {
	case structs.AddressModeAlloc, structs.AddressModeDriver:
		if m.To > 0 {
			return addr, m.To, nil
		}
	}
	return addr, m.Value, nil
}

// findPort looks a port label up among the group's ports, then the task's
// task-level ones (for a group service, every task's).
func findPort(alloc *structs.Allocation, task, label string) (structs.AllocatedPortMapping, bool) {
	ar := alloc.AllocatedResources
	if ar == nil {
		return structs.AllocatedPortMapping{}, false
	}
	if m, ok := ar.Shared.Ports.Get(label); ok {
		return m, true
	}
	for name, tr := range ar.Tasks {
		if tr == nil || (task != "" && name != task) {
			continue
		}
		for _, n := range tr.Networks {
			for _, p := range n.Ports() {
				if p.Label == label {
					return structs.AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: n.IP}, true
				}
			}
		}
	}
	return structs.AllocatedPortMapping{}, false
}
