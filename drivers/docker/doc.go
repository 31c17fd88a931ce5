// Package docker is the docker task driver: it runs each task as a Docker
// container, talking to the Docker daemon over its Engine API.
//
// Where it sits in the data flow: the client's driver manager offers it as
// "docker"; a TaskRunner calls it through drivers.DriverPlugin and persists
// the returned handle (container ID and image) so that a restarted agent
// re-attaches with RecoverTask. The driver copies the container's output
// into the task's rotating log files (drivers/shared/logrotate), so log
// readers see docker tasks as they see raw_exec ones.
//
// # Client
//
// The driver speaks the documented Engine REST API itself (client.go,
// api.go: about fifteen endpoints) rather than importing Docker's Go SDK.
// The SDK (github.com/docker/docker/client, now moving to
// github.com/moby/moby/client) pulls in some twenty modules (OpenTelemetry,
// containerd, OCI image specs) and has changed module path and types
// between releases, while the REST API is a versioned, stable contract.
// The client negotiates the version with GET /version: the daemon's
// version capped at 1.47, refusing daemons older than 1.40; tested against
// docker.io 20.10 (API 1.41). Only unix:// and plain tcp:// endpoints are
// supported (no TLS).
//
// # Plugin config (Config)
//
//	endpoint              daemon address; $DOCKER_HOST, then unix:///var/run/docker.sock
//	allow_privileged      allow privileged = true in tasks (false)
//	volumes { enabled }   allow absolute host paths in volumes and bind mounts (true)
//	default_network_mode  network_mode of tasks that set none ("none"; see below)
//	pull_timeout          bound on pulling a missing image ("5m")
//	fingerprint_period    how often the daemon's health is re-checked ("30s")
//
// # Task config block (TaskConfig; names as Nomad's docker driver)
//
//	image         the image (required); pulled only when not present locally
//	command, args the command, replacing the image's CMD; args alone replace CMD
//	entrypoint    replaces the image's ENTRYPOINT
//	labels        extra container labels
//	network_mode  "none" or "host" (or any mode the daemon has, "bridge")
//	volumes       ["host:container[:ro]"]; relative host paths are in the task dir
//	mount         blocks of type "bind" (source, target, readonly) or "tmpfs"
//	              (target, tmpfs_options { size, mode })
//	work_dir      the working directory
//	privileged    needs allow_privileged in the plugin config
//	hostname      the container's hostname
//
// All values may reference the task's environment (${NOMAD_ALLOC_ID}).
//
// The default network_mode is "none" because the daemons drover is tested
// with run with --bridge=none (no bridge network, no iptables); a task that
// needs the network uses "host", and a node whose daemon has the default
// bridge sets default_network_mode = "bridge". A task that sets no
// network_mode in a group whose network block says mode = "none" or
// mode = "host" gets that Docker mode (drivers.TaskConfig.NetworkMode);
// a group without a mode leaves the plugin's default. Port mapping is
// not supported.
//
// # Containers
//
// A container is named "<task>-<alloc id>" and labelled with the task's
// alloc ID, task, group, job and namespace (Nomad's com.hashicorp.nomad.*
// labels and drover's io.drover.*). The alloc dir is mounted at /alloc, the
// task's local dir at /local and its secrets dir at /secrets, and the
// NOMAD_*_DIR variables point there. memory is the hard limit, or the
// reservation when memory_max is higher (memory_max is then the limit);
// cpu is CPU shares. The task's user runs the command.
//
// Stopping sends the kill_signal (SIGTERM by default, as `docker stop`),
// waits the kill timeout, then sends SIGKILL; an exit code above 128 after
// a stop is reported as death by signal (code - 128).
//
// # Logs
//
// The container logs to Docker's json-file driver (bounded to 3 x 20 MB);
// the driver follows the logs endpoint with timestamps and writes each
// message to the task's rotating files. After each message it records the
// daemon's timestamp in <task dir>/.docker-logs.pos (not visible in the
// container), so a recovered task's copy resumes exactly after the last
// copied message; without that file it resumes from the log files'
// modification time (a line may then be copied twice). An exit is
// reported once the output is copied (waiting at most 5s).
package docker
