// Package exec is the exec task driver: it runs the task's command isolated
// from the host with drivers/shared/isolation — new pid, mount, ipc and uts
// namespaces, a chroot of read-only host directories plus the task's own
// directories, a cgroup bounding memory, CPU and processes, and an
// unprivileged user ("nobody" unless the task sets "user" and the driver
// allows it) — supervised by a task shim (drivers/shared/shim) so that the
// task survives restarts of the agent. A task of a group in network mode
// "none" (drivers.TaskConfig.NetworkMode) also gets a network namespace of
// its own with only loopback, up (network.go); otherwise it shares the
// host's network. Unless the plugin's user_namespace is false, or the
// kernel cannot, the task also runs in a user namespace of its own
// (isolation.NewUserNS): its user maps to itself, root to nobody, and the
// secrets dir goes to the host uid (userNS in driver.go).
//
// Where it sits in the data flow: the client's driver manager offers it as
// "exec"; a TaskRunner calls it through drivers.DriverPlugin and persists
// the returned TaskHandle, whose DriverState (state.go) is the shim's
// State (which names the task's cgroup) plus the task's isolation.State.
//
//	TaskRunner ─▶ Driver ─▶ shim.Start ─▶ drover-shim shim (detached, own session)
//	                                        ├─ creates the cgroup (isolation.NewCgroup)
//	                                        └─▶ isolation.Start: drover-shim isolation-init
//	                                              (PID 1 in new namespaces, in the cgroup)
//	                                              └─ execve ─▶ the task's command (still PID 1)
//
// The shim, not the agent, is the task's parent: it owns the task's
// stdout and stderr (rotated log files), carries out stops, samples the
// cgroup for TaskStats, and records the task's exit (exit code, signal,
// and OOMKilled from the cgroup's OOM counter) in its state dir before it
// removes the cgroup and exits. The init stage arms the task's
// parent-death signal, so the task and its whole pid namespace die if the
// shim dies.
//
// # Agent restarts
//
// RecoverTask re-attaches with shim.Attach: a task still running is
// supervised again with the same pid; a task that exited while no agent
// was attached reports its real exit (WaitTask returns the recorded exit
// code, signal and OOMKilled); a shim that died without recording the exit
// (SIGKILLed, say) yields an error wrapping drivers.ErrTaskNotFound and
// shim.ErrShimDied, after the task's cgroup was destroyed (nothing of the
// task runs on) and the shim's state removed.
//
// # Mounts
//
// TaskConfig.Mounts (a task's volume_mount blocks, resolved by the client
// to host volume paths, and its device plugins' mounts) are bind mounts
// into the task's root, made by the init stage inside the task's own
// mount namespace after the chroot_env and the task's directories, parents
// before children (mounts.go). A read-only mount is remounted read-only.
// The host never sees them and they end with the task: nothing is left
// mounted when it stops, when the agent dies or when its alloc dir is
// removed (the mount points in the task dir are empty directories). The
// task's user (nobody by default) needs the host directory's permissions
// to use it. A destination inside a chroot_env directory must already
// exist there, since those are read-only.
//
// # Config block
//
//	command  the program to run, inside the task's root (required): an
//	         absolute path, or a name looked up in the task's PATH
//	args     its arguments
//
// Both may reference the task's environment (${NOMAD_TASK_DIR}, which is
// "/local" inside the root). NOMAD_ALLOC_DIR, NOMAD_TASK_DIR and
// NOMAD_SECRETS_DIR are given as seen from inside the root: /alloc,
// /local and /secrets.
//
// # Plugin config block
//
// The agent's plugin "exec" { config { ... } } block is validated against
// PluginConfigSchema and mapped to Options by ParsePluginConfig
// (plugin.go): allow_user, default_user, chroot_env, pids_limit,
// no_pivot_root, allow_caps, and default_pid_mode / default_ipc_mode
// (only "private"). The agent passes the Options to New.
//
// # Signals and stopping
//
// The task is PID 1 of its pid namespace. The kernel delivers to it only
// the signals it installed a handler for (SIGKILL excepted), so a task
// that does not handle its kill_signal (SIGINT by default) ignores it and
// is SIGKILLed once kill_timeout passes. StopTask has the shim send the
// signal to every process of the task's cgroup and, after the timeout,
// SIGKILL the whole cgroup (freezer on cgroup v1, cgroup.kill on v2), so
// no process escapes by leaving the process group. SignalTask reaches the
// main process only.
//
// ExecTask runs a command inside the running task (isolation.Enter, from
// the agent): in its pid, ipc, uts and network namespaces, its root and
// cgroup, as its user (as the host IDs of its user, outside its user
// namespace, when it has one).
//
// # Paths
//
// The task's output goes to "<LogDir>/<task>.stdout.<n>" and
// ".stderr.<n>", rotated by the shim within the task's logs block
// (LogMaxFiles, LogMaxFileSizeMB); the client's StdoutPath
// ("<task>.stdout.0") loses its ".0" to give the rotation's base name.
// Each invocation's shim keeps its spec, exit record and log in
// "<AllocDir>/.shims/<task>-<invocation id>" (mode 0700, outside the
// task's root); DestroyTask removes it, with the cgroup should it remain.
// The cgroup is "<cgroup_parent>/<alloc id>.<task>" ("drover/..."), under
// every v1 controller or in the unified v2 hierarchy.
//
// # alloc exec
//
// ExecTaskStreaming (alloc exec) and ExecTask run the command through the
// isolation enter stage (isolation.EnterStart, Enter), started by the
// agent itself, not by the task's shim. The stage is a process start on
// every exec, so it runs from drover-shim, like the shims and the task's
// init stage: a shim.Resolver asks the drover-shim beside the agent for
// its identity once per version of that file, not per exec, and falls
// back to the drover binary when there is none of the same build. An exec
// asks the task's shim nothing: the kernel says whether the task's process
// still runs (isolation.Alive), and the task's user is looked up by its
// first exec only. docs/performance.md "alloc exec round trip" has the
// numbers.
//
// The drover binary must hand "drover shim" to shim.RunIfShim and "drover
// isolation-init" to isolation.RunIfInit (command.Run does; drover-shim
// does both too); tests re-execute the test binary for both
// (main_test.go).
package exec
