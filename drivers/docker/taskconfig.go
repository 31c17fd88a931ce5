package docker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskConfig is a task's docker config block. Names, types and defaults
// are those of Nomad's docker driver; TaskConfigSchema declares them.
// Unset fields are left out when it is encoded.
type TaskConfig struct {
	// Image and how it is obtained.
	Image            string         `json:"image,omitzero"`
	ImagePullTimeout Duration       `json:"image_pull_timeout,omitzero"`
	ForcePull        bool           `json:"force_pull,omitzero"`
	Load             string         `json:"load,omitzero"`
	Auth             TaskAuthConfig `json:"auth,omitzero"`
	AuthSoftFail     bool           `json:"auth_soft_fail,omitzero"`

	// The process.
	Command    string    `json:"command,omitzero"`
	Args       []string  `json:"args,omitzero"`
	Entrypoint []string  `json:"entrypoint,omitzero"`
	WorkDir    string    `json:"work_dir,omitzero"`
	Hostname   string    `json:"hostname,omitzero"`
	Labels     StringMap `json:"labels,omitzero"`
	Init       bool      `json:"init,omitzero"`

	// Logging is the container's Docker log driver; unset: the plugin's.
	Logging      LoggingConfig      `json:"logging,omitzero"`
	Healthchecks HealthchecksConfig `json:"healthchecks,omitzero"`

	// Network.
	NetworkMode      string   `json:"network_mode,omitzero"`
	DNSServers       []string `json:"dns_servers,omitzero"`
	DNSSearchDomains []string `json:"dns_search_domains,omitzero"`
	DNSOptions       []string `json:"dns_options,omitzero"`
	ExtraHosts       []string `json:"extra_hosts,omitzero"`
	// Ports are the labels of the allocation's ports to publish; PortMap
	// (Nomad's older form) maps labels to container ports (ports.go).
	Ports   []string  `json:"ports,omitzero"`
	PortMap StringMap `json:"port_map,omitzero"`

	// Storage.
	Volumes        []string      `json:"volumes,omitzero"`
	VolumeDriver   string        `json:"volume_driver,omitzero"`
	Mounts         []MountConfig `json:"mount,omitzero"`
	MountsList     []MountConfig `json:"mounts,omitzero"` // Nomad's pre-1.0.1 name of mount
	ReadonlyRootfs bool          `json:"readonly_rootfs,omitzero"`
	ShmSize        int64         `json:"shm_size,omitzero"`

	// Privilege.
	Privileged  bool           `json:"privileged,omitzero"`
	CapAdd      []string       `json:"cap_add,omitzero"`
	CapDrop     []string       `json:"cap_drop,omitzero"`
	SecurityOpt []string       `json:"security_opt,omitzero"`
	Devices     []DeviceConfig `json:"devices,omitzero"`

	// Limits.
	Ulimit          StringMap `json:"ulimit,omitzero"`
	Sysctl          StringMap `json:"sysctl,omitzero"`
	PidsLimit       int64     `json:"pids_limit,omitzero"`
	MemoryHardLimit int64     `json:"memory_hard_limit,omitzero"`
	CPUHardLimit    bool      `json:"cpu_hard_limit,omitzero"`
	CPUCFSPeriod    int64     `json:"cpu_cfs_period,omitzero"`
}

// TaskAuthConfig is a task's auth block: registry credentials.
type TaskAuthConfig struct {
	Username      string `json:"username,omitzero"`
	Password      string `json:"password,omitzero"`
	Email         string `json:"email,omitzero"`
	ServerAddress string `json:"server_address,omitzero"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (a *TaskAuthConfig) UnmarshalJSON(b []byte) error {
	type plain TaskAuthConfig
	return decodeBlock(b, (*plain)(a))
}

func (a TaskAuthConfig) empty() bool { return a == TaskAuthConfig{} }

// HealthchecksConfig is a task's healthchecks block.
type HealthchecksConfig struct {
	// Disable turns off the image's HEALTHCHECK.
	Disable bool `json:"disable,omitzero"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (h *HealthchecksConfig) UnmarshalJSON(b []byte) error {
	type plain HealthchecksConfig
	return decodeBlock(b, (*plain)(h))
}

// DeviceConfig is one entry of a task's devices: a host device node.
type DeviceConfig struct {
	HostPath          string `json:"host_path,omitzero"`
	ContainerPath     string `json:"container_path,omitzero"`
	CgroupPermissions string `json:"cgroup_permissions,omitzero"`
}

// MountConfig is one `mount` block: a Docker volume (the default type, as
// in Nomad), a bind mount or a tmpfs.
type MountConfig struct {
	Type          string         `json:"type,omitzero"`
	Target        string         `json:"target,omitzero"`
	Source        string         `json:"source,omitzero"`
	ReadOnly      bool           `json:"readonly,omitzero"`
	VolumeOptions VolumeOptions  `json:"volume_options,omitzero"`
	TmpfsOptions  []TmpfsOptions `json:"tmpfs_options,omitzero"`
	BindOptions   []BindOptions  `json:"bind_options,omitzero"`
}

// VolumeOptions is a volume mount's volume_options block.
type VolumeOptions struct {
	// NoCopy keeps Docker from copying the image's content at the target
	// into a new volume.
	NoCopy bool      `json:"no_copy,omitzero"`
	Labels StringMap `json:"labels,omitzero"`
	// DriverConfig names the volume driver and its options.
	DriverConfig VolumeDriverConfig `json:"driver_config,omitzero"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (v *VolumeOptions) UnmarshalJSON(b []byte) error {
	type plain VolumeOptions
	return decodeBlock(b, (*plain)(v))
}

// VolumeDriverConfig is volume_options' driver_config block.
type VolumeDriverConfig struct {
	Name    string    `json:"name,omitzero"`
	Options StringMap `json:"options,omitzero"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (d *VolumeDriverConfig) UnmarshalJSON(b []byte) error {
	type plain VolumeDriverConfig
	return decodeBlock(b, (*plain)(d))
}

func (d VolumeDriverConfig) set() bool { return d.Name != "" || len(d.Options) > 0 }

// TmpfsOptions is a mount's tmpfs_options block.
type TmpfsOptions struct {
	Size int64 `json:"size,omitzero"`
	Mode int64 `json:"mode,omitzero"`
}

// BindOptions is a mount's bind_options block.
type BindOptions struct {
	Propagation string `json:"propagation,omitzero"`
}

// StringMap is a map of strings written either as an attribute
// (`labels = { a = "b" }`) or as a block (`labels { a = "b" }`, which the
// job file parser gives as a list of objects). Numbers and bools are
// taken as their text, as HCL converts them (`nofile = 2048`).
type StringMap map[string]string

// UnmarshalJSON accepts an object or a list of objects, merged in order.
func (m *StringMap) UnmarshalJSON(b []byte) error {
	var list []map[string]json.RawMessage
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("want a map of strings: %w", err)
		}
	} else {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(b, &one); err != nil {
			return fmt.Errorf("want a map of strings: %w", err)
		}
		list = append(list, one)
	}
	out := map[string]string{}
	for _, item := range list {
		for k, raw := range item {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			switch v := v.(type) {
			case string:
				out[k] = v
			case float64:
				out[k] = strconv.FormatFloat(v, 'f', -1, 64)
			case bool:
				out[k] = strconv.FormatBool(v)
			default:
				return fmt.Errorf("%s: want a string, got %s", k, raw)
			}
		}
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

// defaultCPUCFSPeriod is cpu_cfs_period when the task sets none (µs).
const defaultCPUCFSPeriod = 100000

// decodeTaskConfig interpolates the task's environment (as the container
// sees it) into the config block, checks it against TaskConfigSchema,
// decodes it and fills in defaults. Errors name the field
// (*base.ConfigError).
func decodeTaskConfig(cfg *drivers.TaskConfig, env map[string]string) (*TaskConfig, error) {
	raw, err := taskenv.InterpolateJSON(cfg.RawConfig, env, nil, nil)
	if err != nil {
		return nil, err
	}
	raw = dropNulls(raw)
	if _, err := TaskConfigSchema().Validate(Name, raw); err != nil {
		return nil, fmt.Errorf("the task's config block: %w", err)
	}
	interp := *cfg
	interp.RawConfig = raw
	conf := &TaskConfig{}
	if err := interp.DecodeDriverConfig(conf); err != nil {
		return nil, err
	}
	if conf.Image == "" {
		return nil, &base.ConfigError{Plugin: Name, Field: "image", Err: errors.New(`missing "image" in the task's config block`)}
	}
	if conf.CPUCFSPeriod == 0 {
		conf.CPUCFSPeriod = defaultCPUCFSPeriod
	}
	conf.Mounts = append(conf.Mounts, conf.MountsList...)
	conf.MountsList = nil
	return conf, nil
}

// dropNulls removes the null fields of a JSON object, at every depth: a
// null option is an unset one, as in Nomad's job files.
func dropNulls(raw json.RawMessage) json.RawMessage {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return raw // the schema reports it
	}
	out, err := json.Marshal(withoutNulls(v))
	if err != nil {
		return raw
	}
	return out
}

func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				v[k] = withoutNulls(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = withoutNulls(e)
		}
	}
	return v
}

// pullTimeout is the task's image_pull_timeout, else the plugin's
// pull_timeout.
func (c *TaskConfig) pullTimeout(plugin *Config) time.Duration {
	if c.ImagePullTimeout > 0 {
		return time.Duration(c.ImagePullTimeout)
	}
	return time.Duration(plugin.PullTimeout)
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
// (Docker has modes of those names) and, for "host", the task publishes
// no ports (Nomad's groups in host mode publish docker tasks' ports from
// Docker's network), else the plugin's default_network_mode.
func networkMode(task, group, pluginDefault string, publishes bool) string {
	switch {
	case task != "":
		return task
	case group == "none" || (group == "host" && !publishes):
		return group
	default:
		return pluginDefault
	}
}
