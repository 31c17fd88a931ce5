package taskrunner

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

var _ prestartHook = (*envHook)(nil)

// EnvBuilder builds a task's environment from its alloc, task, directories
// and node. The default is BuildEnv; tests may swap it.
type EnvBuilder func(req *PrestartRequest, node *structs.Node) map[string]string

// envHook builds the task's NOMAD_* environment before every start, so that
// a restart sees the latest alloc.
type envHook struct {
	build EnvBuilder
	node  *structs.Node
	// network returns the allocation's network namespace (bridge and CNI
	// modes), nil when it has none.
	network func() *drivers.NetworkIsolationSpec
}

// Name returns "env".
func (*envHook) Name() string { return "env" }

// Prestart builds the environment.
func (h *envHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	resp.Env = h.build(req, h.node)
	if h.network != nil {
		if n := h.network(); n != nil && n.IP != "" {
			setAllocAddrs(resp.Env, req.Alloc, n.IP) // ports.go
		}
	}
	return nil
}

// BuildEnv is the default EnvBuilder: taskenv.Build over the alloc, task,
// task directory and node.
func BuildEnv(req *PrestartRequest, node *structs.Node) map[string]string {
	alloc, task := req.Alloc, req.Task
	in := &taskenv.Input{
		AllocID:    alloc.ID,
		AllocName:  alloc.Name,
		AllocIndex: alloc.Index(),
		JobID:      alloc.JobID,
		GroupName:  alloc.TaskGroup,
		TaskName:   task.Name,
		Namespace:  alloc.Namespace,
		AllocDir:   req.AllocDir.SharedDir,
		TaskDir:    req.TaskDir.Dir,
		LocalDir:   req.TaskDir.LocalDir,
		SecretsDir: req.TaskDir.SecretsDir,
		TaskEnv:    task.Env,
	}
	meta := map[string]string{}
	if job := alloc.Job; job != nil {
		in.JobName = job.Name
		in.Region = job.Region
		maps.Copy(meta, job.Meta)
		if tg := job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			maps.Copy(meta, tg.Meta)
		}
	}
	maps.Copy(meta, task.Meta)
	in.Meta = meta
	in.Ports, in.TaskPorts, in.OtherTaskPorts = allocPorts(alloc, task.Name) // ports.go
	if r := taskResources(alloc, task); r != nil {
		in.CPULimit = int(r.CPUShares)
		in.MemoryLimitMB = int(r.MemoryMB)
		in.MemoryMaxMB = int(r.MemoryMaxMB)
	}
	setNode(in, node)
	return taskenv.Build(in)
}

// setNode fills in the node's values of in.
func setNode(in *taskenv.Input, node *structs.Node) {
	if node == nil {
		return
	}
	in.Datacenter = node.Datacenter
	in.NodeID = node.ID
	in.NodeName = node.Name
	in.NodeClass = node.NodeClass
	in.NodePool = node.NodePool
	in.NodeAttrs = node.Attributes
	in.NodeMeta = node.Meta
}

// driverView returns the task's config block and environment as its
// driver gets them: the environment as the task sees it given the
// driver's filesystem isolation (taskenv.ForIsolation: /local rather than
// the host path in a chroot or an image), and the config with every
// ${...} reference resolved against it and the node's attributes and meta,
// for every driver, as Nomad's client does.
func driverView(raw json.RawMessage, env map[string]string, caps *drivers.Capabilities, dir *allocdir.TaskDir, node *structs.Node, alloc *structs.Allocation) (json.RawMessage, map[string]string, error) {
	isolation := taskenv.IsolationNone
	if caps != nil && caps.FSIsolation != "" {
		isolation = caps.FSIsolation
	}
	env = taskenv.ForIsolation(env, isolation, taskenv.Dirs{
		Alloc: dir.SharedDir, Task: dir.Dir, Local: dir.LocalDir, Secrets: dir.SecretsDir,
	})
	in := &taskenv.Input{}
	if alloc.Job != nil {
		in.Region = alloc.Job.Region
	}
	setNode(in, node)
	raw, err := taskenv.InterpolateJSON(raw, env, taskenv.NodeAttrs(in), in.NodeMeta)
	if err != nil {
		return nil, nil, err
	}
	return raw, env, nil
}
