// Package docker is the docker task driver: it runs each task as a Docker
// container, talking to the Docker daemon over its Engine API.
//
// Where it sits in the data flow: the client's driver manager offers it as
// "docker"; a TaskRunner calls it through drivers.DriverPlugin and persists
// the returned handle (container ID, image, whether the driver fetched the
// image) so that a restarted agent re-attaches with RecoverTask. The
// driver copies the container's output into the task's rotating log files
// (drivers/shared/logrotate), so log readers see docker tasks as they see
// raw_exec ones.
//
// # Client
//
// The driver speaks the documented Engine REST API with its own small
// transport (client.go: unix, tcp and TLS endpoints, API version
// negotiation capped at 1.47, refusing daemons older than 1.40) and the
// official request and response types of github.com/moby/moby/api
// (api.go). docs/decisions.md measures why not Docker's Go client: 1.8 MB
// and nineteen modules (OpenTelemetry among them) against 0.24 MB and five,
// and it does not cover credential helpers or config files anyway.
// Tested against docker.io 20.10 (API 1.41).
//
// # Configuration
//
// Config is the plugin block and TaskConfig a task's config block, with
// the names, types and defaults of Nomad's docker driver;
// PluginConfigSchema and TaskConfigSchema declare them (plugins/base), and
// input is checked against them, so an unknown key is an error naming it.
// docs/drivers.md lists every option.
//
// Safety: a task gets nothing that reaches the host unless the plugin
// config allows it (docs/security.md): host paths outside the allocation
// need volumes { enabled = true } (volumes.go resolves paths, following
// links, inside the allocation); privileged and unconfining security_opt
// need allow_privileged (secopts.go); cap_add must be within allow_caps,
// which by default is Docker's set less NET_RAW (caps.go). spec.go builds
// the container from all of it.
//
// # Images
//
// image.go: a load tarball is loaded; a latest (or untagged) image, or any
// with force_pull, is pulled at every start, others only when missing.
// Credentials come from the task's auth block, then the plugin's auth
// config file (auths, credHelpers, credsStore), then its auth helper
// (auth.go); auth_soft_fail pulls without them when finding them fails. A
// pull is bounded by image_pull_timeout and cancelled after
// pull_activity_timeout without progress. imagegc.go removes an image the
// driver pulled or loaded once no task has used it for gc.image_delay.
//
// # Containers
//
// A container is named "<task>-<alloc id>" and labelled with the task's
// alloc ID, task, group, job and namespace (Nomad's com.hashicorp.nomad.*
// labels and drover's io.drover.*). The alloc dir is mounted at /alloc, the
// task's local dir at /local and its secrets dir at /secrets, and the
// NOMAD_*_DIR variables point there. memory is the hard limit, or the
// reservation when memory_max or memory_hard_limit is higher; cpu is CPU
// shares, and with cpu_hard_limit also a CFS quota. The task's user runs
// the command.
//
// Storage (volumes.go): a volumes entry "host:container[:options]" and a bind mount's
// source are host paths, relative ones in the task dir; outside the
// allocation they need volumes { enabled = true }. With volume_driver the
// host side of a volumes entry that is not an absolute path is a volume
// name (volume_driver needs volumes enabled). A mount block is a named
// Docker volume by default (type "volume", volume_options: no_copy, labels,
// and driver_config, which needs volumes enabled since a driver's options
// can reach any host path), a bind (bind_options.propagation) or a tmpfs
// (tmpfs_options: size in bytes, mode). Named volumes outlive the
// container, anonymous ones are removed with it. TaskConfig.Mounts (host
// volumes the client resolved from the task's volume_mount blocks, and
// device plugins' mounts) are bound whatever the volumes setting: the
// operator configured those paths.
//
// The default network_mode is "default", the daemon's default network: its
// bridge, or nothing on a daemon started with --bridge=none. A task that
// sets no network_mode in a group whose network block says mode = "none"
// gets Docker's "none", and with mode = "host" Docker's "host" unless it
// publishes ports (drivers.TaskConfig.NetworkMode); a group without a
// mode leaves the plugin's default. ports = ["http"] and the older
// port_map publish the allocation's ports (drivers.TaskConfig.Ports) on
// their host addresses, checked once the container runs (ports.go).
//
// In a bridge or CNI group the driver makes the group's network namespace
// (drivers.DriverNetworkManager, network.go): an infra container from
// infra_image in Docker's "none" network, with the group's hostname and
// DNS, which the client wires with CNI and the group's containers join
// ("container:<id>"). Where the default infra_image cannot be pulled the
// driver imports its own pause image (pauseimage.go: a tiny static ELF
// program, made in memory).
//
// Stopping sends the kill_signal (SIGTERM by default, as `docker stop`),
// waits the kill timeout, then sends SIGKILL; an exit code above 128 after
// a stop is reported as death by signal (code - 128). DestroyTask removes
// the container unless gc { container = false }.
//
// # Logs
//
// The container logs to the task's logging driver (default json-file,
// 2 x 2 MB, as Nomad's); the driver follows the logs endpoint with
// timestamps and writes each message to the task's rotating files. After
// each message it records the daemon's timestamp in
// <task dir>/.docker-logs.pos (not visible in the container), so a
// recovered task's copy resumes exactly after the last copied message;
// without that file it resumes from the log files' modification time (a
// line may then be copied twice). An exit is reported once the output is
// copied (waiting at most 5s). A log driver that keeps nothing readable
// ("none") ends the copy at once.
package docker
