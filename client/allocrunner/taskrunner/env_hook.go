package taskrunner

import (
	"context"
	"maps"

	"github.com/drover-io/drover/drivers/shared/taskenv"
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
}

// Name returns "env".
func (*envHook) Name() string { return "env" }

// Prestart builds the environment.
func (h *envHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	resp.Env = h.build(req, h.node)
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
	if r := taskResources(alloc, task); r != nil {
		in.CPULimit = int(r.CPUShares)
		in.MemoryLimitMB = int(r.MemoryMB)
		in.MemoryMaxMB = int(r.MemoryMaxMB)
	}
	if node != nil {
		in.Datacenter = node.Datacenter
		in.NodeID = node.ID
		in.NodeName = node.Name
		in.NodeClass = node.NodeClass
		in.NodePool = node.NodePool
		in.NodeAttrs = node.Attributes
		in.NodeMeta = node.Meta
	}
	return taskenv.Build(in)
}
