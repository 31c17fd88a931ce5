// Package exec is the exec task driver: it runs the task's command isolated
// from the host with drivers/shared/isolation — new pid, mount, ipc and uts
// namespaces, a chroot of read-only host directories plus the task's own
// directories, a cgroup bounding memory, CPU and processes, and an
// unprivileged user ("nobody" unless the task sets "user" and the driver
// allows it).
//
// Where it sits in the data flow: the client's driver manager offers it as
// "exec"; a TaskRunner calls it through drivers.DriverPlugin, persists the
// returned handle (pid, process start time and cgroup) and, after an agent
// restart, re-attaches with RecoverTask.
//
//	TaskRunner ─▶ Driver ─▶ isolation.NewCgroup + isolation.Start
//	                          └─▶ drover isolation-init (PID 1 in new namespaces)
//	                                └─ execve ─▶ the task's command (still PID 1)
//
// Config block:
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
// The task is PID 1 of its pid namespace. The kernel delivers to it only
// the signals it handles (SIGKILL excepted), so a task that does not
// handle its kill_signal is SIGKILLed once the kill timeout passes.
// StopTask sends the signal to every process of the task's cgroup;
// SignalTask to the main process only.
//
// ExecTask runs a command inside the running task (isolation.Enter): in its
// pid, ipc, uts and network namespaces, its root and cgroup, as its user.
//
// The task's stdout and stderr go straight to the files the client names
// (StdoutPath, StderrPath), without rotation: log rotation comes with the
// shim.
//
// Supervision (process.go) is kept apart from the plugin methods so that it
// can move into the per-task shim (drivers/shared/shim).
package exec
