// Package isolation starts a command isolated from the host the way the
// exec driver runs tasks, and manages the cgroup that bounds it. It knows
// nothing of drivers or supervision: who waits on the process (the task
// shim, drivers/shared/shim, for the exec driver) is the caller's
// business.
//
// Where it sits in the data flow: the exec driver's StartTask builds a Spec
// (command, environment, root directory and its mounts, user) and a
// CgroupConfig from the task's config and resources and hands both to a
// shim (shim.Spec.Isolation); the shim creates the cgroup with NewCgroup
// and calls Start, with Spec.DieWithParent so that the task dies with it.
// Start re-executes the drover binary in "isolation init" mode in new pid,
// mount, ipc and uts namespaces (and a network namespace when asked),
// places it in the cgroup before it runs anything of the task's, and hands
// it the Spec through a pipe. The init
// stage (InitMain) builds the task's root inside its mount namespace (bind
// mounts, /proc, a minimal /dev), pivots or chroots into it, drops to the
// task's user and execve's the task's command: the task itself is PID 1 of
// its pid namespace and no drover process stays behind.
//
// Enter runs another command inside a running task (the exec driver's
// ExecTask): it joins the task's pid, ipc, uts and network namespaces with
// setns(2) on a locked thread, starts the init stage in "enter" mode from
// it, which joins the task's cgroup, chroots into /proc/<pid>/root (a Go
// process cannot join a mount namespace), drops privileges and execve's.
// That stage is a process start on every exec: its cost is the binary's
// (the exec driver names drover-shim, whose start is a fraction of the
// drover binary's), and it keeps its work small — one P, and the user's
// IDs set on its own thread alone (dropThreadPrivileges: the syscall
// package's setters would signal every thread and wait for each), as it
// execve's from that thread.
//
// With Spec.UserNS the init stage starts in a new user namespace too,
// owning the others, as the task's user (with, until the task runs, the
// ambient capabilities it needs to build the root) or as root there for a
// root task, which NewUserNS maps to nobody on the host. It cannot walk
// the host's root-only paths nor bind the host's mounts, so Start creates
// the root's mount points and hands it detached copies (open_tree(2)) of
// the root and of every mount source as descriptors, which it attaches
// with move_mount(2) (userns_start.go). Enter runs a command in such a
// task as the host IDs of its user: a Go process cannot join a user
// namespace.
//
// Capabilities outside DefaultCapabilities (or Spec.Capabilities) are
// dropped from the bounding set, so even a task running as root cannot
// mount, load modules or trace the host.
//
// The parent keeps a State (pid, process start time, cgroup paths) that it
// can serialise and later use to find the process and cgroup again.
//
// # Wiring the init stage
//
// The CLI must hand "drover isolation-init" to this package before anything
// else, e.g. first thing in command.Run:
//
//	if code, ok := isolation.RunIfInit(args); ok {
//		return code
//	}
//
// Tests re-execute the test binary instead: in TestMain,
//
//	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
//		os.Exit(code)
//	}
//
// and pass that binary as the InitCommand (the exec driver's
// WithInitCommand).
//
// # PID 1 and signals
//
// Because the task is PID 1 of its namespace, the kernel drops every signal
// sent to it for which it has not installed a handler (SIGKILL and SIGSTOP
// from the host excepted). A task that does not handle SIGINT or SIGTERM
// therefore ignores them; stopping it ends with SIGKILL after the timeout.
// The same holds for every container runtime that runs the task as PID 1.
//
// # Cgroups
//
// DetectCgroups reads /proc/self/mountinfo: the unified (v2) hierarchy is
// used when it has the memory, cpu and pids controllers, else the v1
// hierarchies. A task's cgroup is <controller root>/<parent>/<name> under
// every controller it uses ("drover/<alloc id>.<task>").
package isolation
