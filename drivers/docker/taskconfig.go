package docker

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskConfig is a task's docker config block. Field names are those of
// Nomad's docker driver.
type TaskConfig struct {
	Image       string        `json:"image"`
	Command     string        `json:"command"`
	Args        []string      `json:"args"`
	Entrypoint  []string      `json:"entrypoint"`
	Labels      StringMap     `json:"labels"`
	NetworkMode string        `json:"network_mode"`
	Volumes     []string      `json:"volumes"`
	Mounts      []MountConfig `json:"mount"`
	WorkDir     string        `json:"work_dir"`
	Privileged  bool          `json:"privileged"`
	Hostname    string        `json:"hostname"`
}

// MountConfig is one `mount` block: a bind mount or a tmpfs.
type MountConfig struct {
	Type         string         `json:"type"`
	Target       string         `json:"target"`
	Source       string         `json:"source"`
	ReadOnly     bool           `json:"readonly"`
	TmpfsOptions []TmpfsOptions `json:"tmpfs_options"`
	BindOptions  []BindOptions  `json:"bind_options"`
}

// TmpfsOptions is a mount's tmpfs_options block.
type TmpfsOptions struct {
	Size int64 `json:"size"`
	Mode int64 `json:"mode"`
}

// BindOptions is a mount's bind_options block.
type BindOptions struct {
	Propagation string `json:"propagation"`
}

// StringMap is a map of strings written either as an attribute
// (`labels = { a = "b" }`) or as a block (`labels { a = "b" }`, which the
// job file parser gives as a list of objects).
type StringMap map[string]string

// UnmarshalJSON accepts an object or a list of objects, merged in order.
func (m *StringMap) UnmarshalJSON(b []byte) error {
	out := map[string]string{}
	if err := decodeBlock(b, &out); err != nil {
		return fmt.Errorf("want a map of strings: %w", err)
	}
	*m = out
	return nil
}

// Paths inside the container where the task's directories are mounted.
const (
	containerAllocDir   = "/alloc"
	containerLocalDir   = "/local"
	containerSecretsDir = "/secrets"
)

// Labels set on every container the driver creates. The Nomad ones let
// tools written for Nomad find a task's containers.
const (
	labelNomadAllocID   = "com.hashicorp.nomad.alloc_id"
	labelNomadTaskName  = "com.hashicorp.nomad.task_name"
	labelNomadJobName   = "com.hashicorp.nomad.job_name"
	labelNomadJobID     = "com.hashicorp.nomad.job_id"
	labelNomadGroupName = "com.hashicorp.nomad.task_group_name"
	labelNomadNamespace = "com.hashicorp.nomad.namespace"
	// LabelAllocID is drover's own alloc label; every container the driver
	// creates has it.
	LabelAllocID  = "io.drover.alloc_id"
	labelTaskName = "io.drover.task_name"
	labelJobID    = "io.drover.job_id"
	labelTaskID   = "io.drover.task_id"
)

// containerEnv returns the task's environment as the container sees it:
// the task directory variables point at the container's mount points.
func containerEnv(env map[string]string) map[string]string {
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out["NOMAD_ALLOC_DIR"] = containerAllocDir
	out["NOMAD_TASK_DIR"] = containerLocalDir
	out["NOMAD_SECRETS_DIR"] = containerSecretsDir
	return out
}

// decodeTaskConfig interpolates the task's environment (as the container
// sees it) into the config block, decodes it and validates it.
func decodeTaskConfig(cfg *drivers.TaskConfig, env map[string]string) (*TaskConfig, error) {
	raw, err := taskenv.InterpolateJSON(cfg.RawConfig, env, nil, nil)
	if err != nil {
		return nil, err
	}
	interp := *cfg
	interp.RawConfig = raw
	conf := &TaskConfig{}
	if err := interp.DecodeDriverConfig(conf); err != nil {
		return nil, err
	}
	if conf.Image == "" {
		return nil, errors.New(`missing "image" in the task's config block`)
	}
	return conf, nil
}

// containerName is "<task>-<alloc id>" with characters Docker rejects in
// names replaced by "_".
func containerName(task, allocID string) string {
	name := []byte(task + "-" + allocID)
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !ok || (i == 0 && (c == '.' || c == '-')) {
			name[i] = '_'
		}
	}
	return string(name)
}

// buildSpec turns a task into the container to create.
func buildSpec(cfg *drivers.TaskConfig, conf *TaskConfig, env map[string]string, plugin *Config) (*containerSpec, error) {
	if conf.Privileged && !plugin.AllowPrivileged {
		return nil, errors.New(`privileged containers are disabled: set allow_privileged = true in the docker plugin's config to allow them`)
	}
	spec := &containerSpec{
		Image:      conf.Image,
		Entrypoint: conf.Entrypoint,
		WorkingDir: conf.WorkDir,
		User:       cfg.User,
		Hostname:   conf.Hostname,
		Labels:     containerLabels(cfg, conf.Labels),
		Env:        envList(env),
	}
	if conf.Command != "" {
		spec.Cmd = append([]string{conf.Command}, conf.Args...)
	} else if len(conf.Args) > 0 {
		spec.Cmd = conf.Args
	}
	hc := &spec.HostConfig
	hc.Privileged = conf.Privileged
	hc.NetworkMode = networkMode(conf.NetworkMode, cfg.NetworkMode, plugin.DefaultNetworkMode)
	// The logs endpoint the driver copies from needs a local log driver;
	// its own files are bounded as the task's are by the driver.
	hc.LogConfig = logConfig{Type: "json-file", Config: map[string]string{"max-size": "20m", "max-file": "3"}}
	setResources(hc, cfg.Resources)

	hc.Binds = taskDirBinds(cfg)
	paths := hostPaths{taskDir: cfg.TaskDir.Dir, allocDir: cfg.AllocDir, enabled: plugin.volumesEnabled()}
	for _, v := range conf.Volumes {
		bind, err := paths.volume(v)
		if err != nil {
			return nil, err
		}
		hc.Binds = append(hc.Binds, bind)
	}
	for i, m := range conf.Mounts {
		dm, err := paths.mount(m)
		if err != nil {
			return nil, fmt.Errorf("mount %d: %w", i+1, err)
		}
		hc.Mounts = append(hc.Mounts, dm)
	}
	applyDeviceReservations(hc, cfg)
	return spec, nil
}

// setResources maps the task's resources: memory_max, when above memory,
// is the hard limit and memory the reservation; otherwise memory is the
// hard limit. Swap is not allowed beyond the limit. CPU is in shares
// (MHz, at least Docker's minimum of 2).
func setResources(hc *hostConfig, r *drivers.Resources) {
	if r == nil {
		return
	}
	const mb = 1 << 20
	switch {
	case r.MemoryMaxMB > r.MemoryMB && r.MemoryMB > 0:
		hc.Memory = r.MemoryMaxMB * mb
		hc.MemoryReservation = r.MemoryMB * mb
	case r.MemoryMB > 0:
		hc.Memory = r.MemoryMB * mb
	}
	if hc.Memory > 0 {
		hc.MemorySwap = hc.Memory
	}
	if r.CPUShares > 0 {
		hc.CPUShares = max(r.CPUShares, 2)
	}
}

// taskDirBinds mounts the alloc's shared dir at /alloc and the task's
// local and secrets dirs at /local and /secrets, where they exist.
func taskDirBinds(cfg *drivers.TaskConfig) []string {
	shared := cfg.TaskDir.SharedDir
	if shared == "" && cfg.AllocDir != "" {
		shared = filepath.Join(cfg.AllocDir, "alloc")
	}
	var binds []string
	for _, b := range []struct{ host, ctr string }{
		{shared, containerAllocDir},
		{cfg.TaskDir.LocalDir, containerLocalDir},
		{cfg.TaskDir.SecretsDir, containerSecretsDir},
	} {
		if b.host != "" {
			binds = append(binds, b.host+":"+b.ctr)
		}
	}
	return binds
}

// containerLabels returns the user's labels with the driver's added; the
// driver's win.
func containerLabels(cfg *drivers.TaskConfig, user map[string]string) map[string]string {
	out := maps.Clone(map[string]string(user))
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range map[string]string{
		labelNomadAllocID:   cfg.AllocID,
		labelNomadTaskName:  cfg.Name,
		labelNomadJobName:   cfg.JobName,
		labelNomadJobID:     cfg.JobID,
		labelNomadGroupName: cfg.TaskGroupName,
		labelNomadNamespace: cfg.Namespace,
		LabelAllocID:        cfg.AllocID,
		labelTaskName:       cfg.Name,
		labelJobID:          cfg.JobID,
		labelTaskID:         cfg.ID,
	} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// envList returns env as sorted KEY=value pairs.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// networkMode is the container's network mode: the task's network_mode,
// else the group's network mode when the group sets "none" or "host"
// (Docker has modes of those names), else the plugin's
// default_network_mode.
func networkMode(task, group, pluginDefault string) string {
	switch {
	case task != "":
		return task
	case group == "none" || group == "host":
		return group
	default:
		return pluginDefault
	}
}
