package docker

import (
	"encoding/json"

	"github.com/drover-io/drover/plugins/base"
)

// This file declares the docker driver's two config blocks as base
// schemas: the plugin block (Config) and a task's config block
// (TaskConfig). ParseConfig and decodeTaskConfig check input against them,
// so unknown keys are errors naming the key; a test keeps them in step with
// the Go types.

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// PluginConfigSchema describes the plugin's config block (Config).
func PluginConfigSchema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "endpoint", Type: base.TypeString, Description: "daemon address: unix:///path or tcp://host:port; unset: $DOCKER_HOST, then " + DefaultEndpoint},
		{Name: "auth", Type: base.TypeBlock, Description: "where registry credentials come from when a task's auth gives none", Block: &base.Schema{Fields: []*base.Field{
			{Name: "config", Type: base.TypeString, Description: "a Docker config.json: auths, credHelpers, credsStore"},
			{Name: "helper", Type: base.TypeString, Description: "credential helper name: docker-credential-<helper> on PATH"},
		}}},
		{Name: "tls", Type: base.TypeBlock, Description: "TLS to a tcp:// endpoint (PEM files)", Block: &base.Schema{Fields: []*base.Field{
			{Name: "cert", Type: base.TypeString, Description: "client certificate"},
			{Name: "key", Type: base.TypeString, Description: "client key"},
			{Name: "ca", Type: base.TypeString, Description: "CA that signed the daemon's certificate"},
		}}},
		{Name: "gc", Type: base.TypeBlock, Description: "removal of containers and unused images", Block: &base.Schema{Fields: []*base.Field{
			{Name: "image", Type: base.TypeBool, Default: raw(`true`), Description: "remove an image the driver pulled or loaded once unused for image_delay"},
			{Name: "image_delay", Type: base.TypeDuration, Default: raw(`"3m"`), Description: "how long an unused image is kept"},
			{Name: "container", Type: base.TypeBool, Default: raw(`true`), Description: "remove a task's container when the task is destroyed"},
			{Name: "dangling_containers", Type: base.TypeBlock, Description: "Nomad's reaper of untracked containers: accepted only disabled", Block: &base.Schema{Fields: []*base.Field{
				{Name: "enabled", Type: base.TypeBool},
				{Name: "dry_run", Type: base.TypeBool},
				{Name: "period", Type: base.TypeDuration},
				{Name: "creation_grace", Type: base.TypeDuration},
			}}},
		}}},
		{Name: "volumes", Type: base.TypeBlock, Description: "host paths in tasks' volumes and bind mounts", Block: &base.Schema{Fields: []*base.Field{
			{Name: "enabled", Type: base.TypeBool, Default: raw(`false`), Description: "allow host paths outside the allocation directory"},
			{Name: "selinuxlabel", Type: base.TypeString, Description: `SELinux label ("z" or "Z") added to the task's binds`},
		}}},
		{Name: "allow_privileged", Type: base.TypeBool, Default: raw(`false`), Description: "let tasks set privileged = true (and unconfining security_opt)"},
		{Name: "allow_caps", Type: base.TypeStringList, Default: mustJSON(DefaultAllowCaps), Description: `capabilities tasks may hold; "all" for every one`},
		{Name: "infra_image", Type: base.TypeString, Default: mustJSON(defaultInfraImage()), Description: "image of the infra container holding a bridge or CNI group's network namespace (the default, when it cannot be pulled, is replaced by the driver's own pause image)"},
		{Name: "infra_image_pull_timeout", Type: base.TypeDuration, Default: raw(`"5m"`), Description: "bound on pulling infra_image"},
		{Name: "pull_activity_timeout", Type: base.TypeDuration, Default: raw(`"2m"`), Description: "cancel a pull after this long without progress (at least 1m)"},
		{Name: "pids_limit", Type: base.TypeInt, Default: raw(`0`), Description: "process limit of every container; 0: none; tasks may only lower it"},
		{Name: "logging", Type: base.TypeBlock, Description: `log driver of tasks that set none; default json-file with max-file = "2", max-size = "2m"`, Block: &base.Schema{Fields: []*base.Field{
			{Name: "type", Type: base.TypeString, Default: raw(`"json-file"`)},
			{Name: "driver", Type: base.TypeString, Description: "old name of type"},
			{Name: "config", Type: base.TypeBlock, Description: "the log driver's options"},
		}}},
		{Name: "extra_labels", Type: base.TypeStringList, Description: "Nomad's optional labels (globs); drover sets the job, group, task and namespace labels on every container"},
		{Name: "default_network_mode", Type: base.TypeString, Default: raw(`"default"`), Description: "network_mode of tasks that set none (drover's own); \"default\" is the daemon's default network"},
		{Name: "pull_timeout", Type: base.TypeDuration, Default: raw(`"5m"`), Description: "image_pull_timeout of tasks that set none (drover's own)"},
		{Name: "fingerprint_period", Type: base.TypeDuration, Default: raw(`"30s"`), Description: "how often the daemon's health is checked (drover's own)"},
	}}
}

// mountSchema is a mount block's fields.
func mountSchema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "type", Type: base.TypeString, Default: raw(`"volume"`), Description: `"volume", "bind" or "tmpfs"`},
		{Name: "target", Type: base.TypeString, Description: "path in the container"},
		{Name: "source", Type: base.TypeString, Description: "a volume's name, or a bind mount's host path (relative paths are in the task directory)"},
		{Name: "readonly", Type: base.TypeBool, Default: raw(`false`)},
		{Name: "volume_options", Type: base.TypeBlock, Block: &base.Schema{Fields: []*base.Field{
			{Name: "no_copy", Type: base.TypeBool, Default: raw(`false`), Description: "do not copy the image's content into a new volume"},
			{Name: "labels", Type: base.TypeBlock, Description: "labels of a new volume (a map)"},
			{Name: "driver_config", Type: base.TypeBlock, Description: "needs the plugin's volumes { enabled = true }", Block: &base.Schema{Fields: []*base.Field{
				{Name: "name", Type: base.TypeString, Description: "the volume driver"},
				{Name: "options", Type: base.TypeBlock, Description: "the driver's options (a map)"},
			}}},
		}}},
		{Name: "bind_options", Type: base.TypeBlock, Block: &base.Schema{Fields: []*base.Field{
			{Name: "propagation", Type: base.TypeString},
		}}},
		{Name: "tmpfs_options", Type: base.TypeBlock, Block: &base.Schema{Fields: []*base.Field{
			{Name: "size", Type: base.TypeInt, Description: "bytes"},
			{Name: "mode", Type: base.TypeInt},
		}}},
	}}
}

// TaskConfigSchema describes a task's config block (TaskConfig): every
// option the driver takes, for validation when a job is submitted.
func TaskConfigSchema() *base.Schema {
	return &base.Schema{Hints: nomadOnlyKeys, Fields: []*base.Field{
		{Name: "image", Type: base.TypeString, Required: true, Description: "the image; a missing tag, or latest, is pulled on every start"},
		{Name: "image_pull_timeout", Type: base.TypeDuration, Default: raw(`"5m"`), Description: "bound on pulling the image"},
		{Name: "force_pull", Type: base.TypeBool, Default: raw(`false`), Description: "pull the image even when it is present"},
		{Name: "load", Type: base.TypeString, Description: "image tarball in the task's local directory to load instead of pulling"},
		{Name: "auth", Type: base.TypeBlock, Description: "registry credentials", Block: &base.Schema{Fields: []*base.Field{
			{Name: "username", Type: base.TypeString},
			{Name: "password", Type: base.TypeString},
			{Name: "email", Type: base.TypeString},
			{Name: "server_address", Type: base.TypeString},
		}}},
		{Name: "auth_soft_fail", Type: base.TypeBool, Default: raw(`false`), Description: "pull without credentials when looking them up fails"},
		{Name: "command", Type: base.TypeString},
		{Name: "args", Type: base.TypeStringList},
		{Name: "entrypoint", Type: base.TypeStringList},
		{Name: "work_dir", Type: base.TypeString},
		{Name: "hostname", Type: base.TypeString},
		{Name: "labels", Type: base.TypeBlock, Description: "container labels (a map)"},
		{Name: "init", Type: base.TypeBool, Default: raw(`false`), Description: "run Docker's init as PID 1"},
		{Name: "logging", Type: base.TypeBlock, Description: "the container's log driver; unset: the plugin's", Block: &base.Schema{Fields: []*base.Field{
			{Name: "type", Type: base.TypeString},
			{Name: "driver", Type: base.TypeString, Description: "old name of type"},
			{Name: "config", Type: base.TypeBlock, Description: "the log driver's options"},
		}}},
		{Name: "healthchecks", Type: base.TypeBlock, Block: &base.Schema{Fields: []*base.Field{
			{Name: "disable", Type: base.TypeBool, Default: raw(`false`), Description: "turn off the image's HEALTHCHECK"},
		}}},
		{Name: "network_mode", Type: base.TypeString, Description: `"none", "host" or a Docker network; unset: the group's mode or the plugin's default_network_mode`},
		{Name: "dns_servers", Type: base.TypeStringList},
		{Name: "dns_search_domains", Type: base.TypeStringList},
		{Name: "dns_options", Type: base.TypeStringList},
		{Name: "extra_hosts", Type: base.TypeStringList, Description: `"host:ip" entries of /etc/hosts`},
		{Name: "ports", Type: base.TypeStringList, Description: "labels of the group's network ports to publish, each host port to its `to` (else the same port)"},
		{Name: "port_map", Type: base.TypeBlock, Description: "older form: map of port label to container port"},
		{Name: "volumes", Type: base.TypeStringList, Description: `"host:container[:options]"; host paths outside the allocation need the plugin's volumes { enabled = true }`},
		{Name: "volume_driver", Type: base.TypeString, Description: "Docker volume driver of the volumes entries, which are then volume names; needs the plugin's volumes { enabled = true }"},
		{Name: "mount", Type: base.TypeBlockList, Block: mountSchema()},
		{Name: "mounts", Type: base.TypeBlockList, Block: mountSchema(), Description: "old name of mount"},
		{Name: "readonly_rootfs", Type: base.TypeBool, Default: raw(`false`)},
		{Name: "shm_size", Type: base.TypeInt, Description: "bytes of /dev/shm"},
		{Name: "privileged", Type: base.TypeBool, Default: raw(`false`), Description: "needs the plugin's allow_privileged"},
		{Name: "cap_add", Type: base.TypeStringList, Description: "within the plugin's allow_caps"},
		{Name: "cap_drop", Type: base.TypeStringList},
		{Name: "security_opt", Type: base.TypeStringList, Description: "unconfining options need the plugin's allow_privileged"},
		{Name: "devices", Type: base.TypeBlockList, Block: &base.Schema{Fields: []*base.Field{
			{Name: "host_path", Type: base.TypeString, Required: true},
			{Name: "container_path", Type: base.TypeString, Description: "unset: host_path"},
			{Name: "cgroup_permissions", Type: base.TypeString, Default: raw(`"rwm"`)},
		}}},
		{Name: "ulimit", Type: base.TypeBlock, Description: `map of limit name to "soft[:hard]"`},
		{Name: "sysctl", Type: base.TypeBlock, Description: "map of sysctl to value"},
		{Name: "pids_limit", Type: base.TypeInt, Description: "process limit; at most the plugin's pids_limit"},
		{Name: "memory_hard_limit", Type: base.TypeInt, Description: "MB; memory becomes the reservation"},
		{Name: "cpu_hard_limit", Type: base.TypeBool, Default: raw(`false`), Description: "limit CPU to the task's cpu instead of weighting it"},
		{Name: "cpu_cfs_period", Type: base.TypeInt, Default: raw(`100000`), Description: "µs, with cpu_hard_limit"},
	}}
}

// nomadOnlyKeys are Nomad docker options drover does not support, with
// what to do instead: TaskConfigSchema's hints.
var nomadOnlyKeys = map[string]string{
	"network_aliases":           "user-defined Docker network options are not supported",
	"ipv4_address":              "user-defined Docker network options are not supported",
	"ipv6_address":              "user-defined Docker network options are not supported",
	"advertise_ipv6_address":    "user-defined Docker network options are not supported",
	"mac_address":               "user-defined Docker network options are not supported",
	"container_exists_attempts": "not needed: a leftover container of the task is removed when it starts",
	"ipc_mode":                  "not supported: containers have their own IPC namespace",
	"pid_mode":                  "not supported: containers have their own PID namespace",
	"uts_mode":                  "not supported: containers have their own UTS namespace",
	"userns_mode":               "not supported",
	"runtime":                   "not supported: containers use the daemon's default runtime",
	"isolation":                 "Windows containers are not supported",
	"cpuset_cpus":               "not supported",
	"storage_opt":               "not supported",
	"group_add":                 "not supported",
	"oom_score_adj":             "not supported",
	"tty":                       "not supported",
	"interactive":               "not supported",
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
