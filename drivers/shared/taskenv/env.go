package taskenv

import (
	"maps"
	"strconv"
	"strings"
)

// Names of the variables Build sets.
const (
	AllocID        = "NOMAD_ALLOC_ID"
	ShortAllocID   = "NOMAD_SHORT_ALLOC_ID"
	AllocName      = "NOMAD_ALLOC_NAME"
	AllocIndex     = "NOMAD_ALLOC_INDEX"
	TaskName       = "NOMAD_TASK_NAME"
	GroupName      = "NOMAD_GROUP_NAME"
	JobID          = "NOMAD_JOB_ID"
	JobName        = "NOMAD_JOB_NAME"
	Namespace      = "NOMAD_NAMESPACE"
	Region         = "NOMAD_REGION"
	Datacenter     = "NOMAD_DC"
	CPULimit       = "NOMAD_CPU_LIMIT"
	MemoryLimit    = "NOMAD_MEMORY_LIMIT"
	MemoryMaxLimit = "NOMAD_MEMORY_MAX_LIMIT"
	AllocDir       = "NOMAD_ALLOC_DIR"
	TaskDir        = "NOMAD_TASK_DIR"
	SecretsDir     = "NOMAD_SECRETS_DIR"
	// MetaPrefix prefixes each meta key: NOMAD_META_<KEY>.
	MetaPrefix = "NOMAD_META_"
)

// Input is what a task's environment is built from.
type Input struct {
	AllocID    string
	AllocName  string
	AllocIndex int
	JobID      string
	JobName    string
	GroupName  string
	TaskName   string
	Namespace  string
	Region     string
	Datacenter string

	// The node the task runs on, for ${node.*}.
	NodeID    string
	NodeName  string
	NodeClass string
	NodePool  string

	// CPULimit is in MHz; MemoryMaxMB is 0 without oversubscription.
	CPULimit      int
	MemoryLimitMB int
	MemoryMaxMB   int

	// AllocDir is the shared <alloc>/alloc directory; TaskDir the task's
	// directory and LocalDir its local/ directory (NOMAD_TASK_DIR is
	// LocalDir, or TaskDir when LocalDir is empty).
	AllocDir   string
	TaskDir    string
	SecretsDir string
	LocalDir   string

	// Meta is the merged job, group and task meta.
	Meta map[string]string
	// TaskEnv is the task's env block; its keys and values may reference
	// ${NOMAD_*}, ${attr.*}, ${meta.*} and ${node.*}.
	TaskEnv map[string]string
	// NodeAttrs and NodeMeta are the node's attributes ("kernel.name") and
	// meta, for ${attr.*} and ${meta.*}.
	NodeAttrs map[string]string
	NodeMeta  map[string]string

	// Ports are the allocation's group ports; TaskPorts the task's own
	// task-level ports (older jobs) and OtherTaskPorts those of the
	// group's other tasks, by task name (ports.go).
	Ports          []Port
	TaskPorts      []Port
	OtherTaskPorts map[string][]Port
}

// Build returns the task's environment: the NOMAD_* variables, the meta
// values (NOMAD_META_*, which may reference the node: class =
// "${node.class}"), then the task's env block interpolated against them and
// the node's values. The env block wins where a key is set twice.
func Build(in *Input) map[string]string {
	env := make(map[string]string)
	set := func(k, v string) {
		if v != "" {
			env[k] = v
		}
	}
	set(AllocID, in.AllocID)
	set(ShortAllocID, shortID(in.AllocID))
	set(AllocName, in.AllocName)
	env[AllocIndex] = strconv.Itoa(in.AllocIndex)
	set(TaskName, in.TaskName)
	set(GroupName, in.GroupName)
	set(JobID, in.JobID)
	set(JobName, in.JobName)
	set(Namespace, in.Namespace)
	set(Region, in.Region)
	set(Datacenter, in.Datacenter)
	if in.CPULimit > 0 {
		env[CPULimit] = strconv.Itoa(in.CPULimit)
	}
	if in.MemoryLimitMB > 0 {
		env[MemoryLimit] = strconv.Itoa(in.MemoryLimitMB)
	}
	if in.MemoryMaxMB > 0 {
		env[MemoryMaxLimit] = strconv.Itoa(in.MemoryMaxMB)
	}
	set(AllocDir, in.AllocDir)
	if in.LocalDir != "" {
		env[TaskDir] = in.LocalDir
	} else {
		set(TaskDir, in.TaskDir)
	}
	set(SecretsDir, in.SecretsDir)
	setPortEnv(env, in) // ports.go

	attrs := NodeAttrs(in)
	// Meta values are interpolated against the NOMAD_* values above and
	// the node's, and the env block against those and the meta values, so
	// that the result does not depend on map iteration order.
	base := maps.Clone(env)
	for k, v := range in.Meta {
		key := metaKey(k)
		v = Interpolate(v, base, attrs, in.NodeMeta)
		env[MetaPrefix+key] = v
		env[MetaPrefix+strings.ToUpper(key)] = v
	}
	base = maps.Clone(env)
	for k, v := range in.TaskEnv {
		env[Interpolate(k, base, attrs, in.NodeMeta)] = Interpolate(v, base, attrs, in.NodeMeta)
	}
	return env
}

// NodeAttrs returns in.NodeAttrs plus the node's own values under the keys
// Interpolate resolves ${node.*} with: "node.unique.id",
// "node.unique.name", "node.datacenter", "node.region", "node.class" and
// "node.pool".
func NodeAttrs(in *Input) map[string]string {
	attrs := maps.Clone(in.NodeAttrs)
	if attrs == nil {
		attrs = make(map[string]string)
	}
	for k, v := range map[string]string{
		"node.unique.id":   in.NodeID,
		"node.unique.name": in.NodeName,
		"node.datacenter":  in.Datacenter,
		"node.region":      in.Region,
		"node.class":       in.NodeClass,
		"node.pool":        in.NodePool,
	} {
		if v != "" {
			attrs[k] = v
		}
	}
	return attrs
}

// shortID is the first 8 characters of an allocation ID.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// metaKey makes a meta key safe for a variable name: characters other than
// letters, digits, '_' and '.' become '_'.
func metaKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.':
			return r
		}
		return '_'
	}, k)
}
