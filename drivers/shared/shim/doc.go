// Package shim supervises one task process from a small helper process,
// the shim, so that tasks survive restarts of the agent.
//
// Where it sits in the data flow: a driver's StartTask (raw_exec,
// exec) calls Start, persists Handle.State() in the TaskHandle's
// DriverState, and serves WaitTask, StopTask, SignalTask, TaskStats and
// InspectTask through the Handle. After an agent restart, RecoverTask calls
// Attach with the persisted State, or, given only the client's start
// intent (the agent died during StartTask), FindTask with the task config.
//
//	agent ── unix socket (JSON lines, versioned) ──▶ shim ──▶ task process group
//	                                                  │
//	                                                  ├─▶ <StdoutPath>.<n>, <StderrPath>.<n> (logrotate)
//	                                                  └─▶ <StateDir>/spec.json (locked), state.json, exit.json, shim.log
//
// # The shim process
//
// The shim is the drover binary re-executed as "drover shim -state-dir
// <dir> -detached" (or drover-shim, see Command). Start runs it directly,
// in a new session (Setsid) with stdio on /dev/null: killing the agent's
// process group does not touch it, and it outlives the agent (it is then
// re-parented). While the agent lives the shim is its child, and the
// agent reaps it when it exits: one goroutine per shim waits on the
// shim's pidfd in the runtime's poller (no thread each). Until 2026-11 a
// launcher process started the shim and exited, so that the shim was
// never the agent's child; it cost a Go process start per task
// (docs/decisions.md). One shim runs per task.
//
// The shim starts the task in its own process group (Setpgid) with stdout
// and stderr on pipes it copies into log files, then serves status,
// signal, stats, wait and stop on its socket. Stop is carried out by the
// shim (signal the group, wait the timeout, SIGKILL the group), so it
// completes even if the agent dies half-way. The shim is the task's child
// subreaper (PR_SET_CHILD_SUBREAPER): a process of the task whose parent
// exits becomes the shim's child, also when it left the task's process
// group or session, so the task's processes are exactly the shim's
// descendants. When the task's main process exits, the shim SIGKILLs its
// process group and every descendant (nothing may run unsupervised, and
// leftovers would hold the log pipes open), drains the output, closes the
// log files, writes the exit to <StateDir>/exit.json atomically
// (temporary file, fsync, rename), and only then answers waiters; then it
// exits. The agent learns the exit from that file: it holds no wait
// connection while a task runs, but waits for the shim to exit (the
// goroutine that reaps a shim it started, or one watching the pidfd of a
// shim it attached to after a restart) and reads the file; so does a
// restarted agent. (Should writing the file fail, a client that asked the
// shim to wait still gets the exit, but the agent reports ErrShimDied.)
//
// An idle shim costs no CPU: its main thread blocks in wait4 for its
// children (reaping the task's orphans as they exit), its socket waits in
// the Go runtime's poller, and it has no timer or ticker. It works only
// when asked: stats are sampled on request, from the task's cgroup or from
// the shim's descendants found through /proc/<pid>/task/<tid>/children
// (no scan of all of /proc; a kernel without those files falls back to
// one).
//
// # Finding a shim without its State
//
// The state dir describes its shim by itself, for an agent that died
// after Start launched a shim and before it saved the State: Start writes
// spec.json before it launches the shim; the shim locks spec.json (flock)
// before reading it and holds the lock until it exits; once the task runs,
// and before Start returns, the shim publishes its State in state.json
// (atomically, synced). Find (FindTask for a task config) reads state.json
// and attaches; without one, a locked spec is a shim still starting (Find
// waits for its state), and an unlocked spec belongs to a shim that never
// started the task: Find removes the spec while holding the lock, so a
// shim still being launched finds no spec and exits without starting the
// task (ErrNotStarted). Live tells whether a shim runs for a state dir,
// Published whether one published its state (it started the task);
// Abandon makes sure none runs or will (a shim nobody knows: Start does it
// when it gives up on a shim, the client for shims its state does not
// know, and an alloc's destroy for shims left in its directory);
// StateDirs and AllocStateDirs list the state dirs under an alloc root or
// dir.
//
// The shim must not be killed with the agent: under systemd, run the agent
// with KillMode=process (as Nomad's docs advise), or shims die with every
// agent restart and their tasks with them.
//
// If the shim itself dies (it is SIGKILLed, say), the kernel SIGKILLs the
// task's main process (Pdeathsig). Other processes of the task's group are
// killed by the next Handle call that finds the shim gone (Attach, Wait,
// ...), which then returns ErrShimDied: the task's own exit is unknown,
// and WaitResult reports it as killed by SIGKILL (ShimDiedResult: exit
// code 137, signal 9, and an error saying its shim died), never as a
// success. Until then they run unsupervised; an isolated task (below) has
// no such gap.
//
// Signal goes to the task's main process only (as Nomad's raw_exec);
// Stop goes to the whole group. Stats sums /proc/<pid>/stat over the
// shim's descendants, plus the CPU time of those it reaped.
//
// Every task starts with default signal dispositions and an empty signal
// mask, whatever the agent inherited (an agent under nohup ignores SIGHUP,
// and an ignored signal stays ignored across fork and execve): the
// shim resets its own before it forks the task (see
// isolation.DefaultSignals), and the isolation init stage resets its own
// before it execve's the task.
//
// # Isolated tasks
//
// A Spec with Isolation (the exec driver) runs the task through
// drivers/shared/isolation instead: the shim detects the host's cgroups,
// creates the task's cgroup, and starts the isolation init stage (the
// shim's own binary again, "drover-shim isolation-init", unless
// Isolation.Init names another) in new namespaces inside it; the init stage execve's the
// task, which is PID 1 of its pid namespace and the shim's child. Then:
//
//   - Stop signals every process of the cgroup and, after the timeout,
//     SIGKILLs the whole cgroup (freezer on v1, cgroup.kill on v2), so
//     nothing escapes by leaving the process group. A PID 1 that does not
//     handle the stop signal ignores it and is killed at the timeout.
//   - Stats reads the cgroup (memory as charged, CPU time, tasks).
//   - On the task's exit the shim kills what is left in the cgroup, reads
//     its OOM kill counter into ExitStatus.OOMKilled, drains the logs,
//     removes the cgroup and only then records the exit: once the exit is
//     known, the cgroup is gone. State.Cgroup names it, so a driver can
//     still destroy it (Cleanup does; drivers may call Cgroup.Destroy, it
//     is idempotent).
//   - The task's parent-death signal is SIGKILL: if the shim dies, the
//     task and its whole pid namespace die with it, and the next Handle
//     call that finds the shim gone (Attach, Wait, ...) destroys the
//     cgroup before it reports ErrShimDied.
//
// Binaries that start isolated shims must hand "drover isolation-init" to
// isolation.RunIfInit as well as "drover shim" to RunIfShim; test binaries
// do both in TestMain.
//
// # Memory
//
// Shims run from drover-shim (Binary, cmd/drover-shim), this package and
// what it imports linked alone: every Go package's init runs in every
// process, and the agent's packages would cost each shim about 2.5 MiB
// (docs/decisions.md). Keep this package's imports small; deps_test.go
// keeps the agent's out. Start runs the shim with GOMAXPROCS=1,
// GOGC off and heap profiling off (shimEnv); once the task runs, the shim
// collects only under a memory limit just above what it then uses
// (settleMemory), since GOGC cannot keep a heap of a few hundred KiB
// small. An idle shim allocates nothing and so never collects.
//
// # Wiring "drover shim"
//
// The CLI must hand "drover shim ..." to this package before anything else,
// e.g. first thing in command.Run (cmd/drover-shim does the same):
//
//	if code, ok := shim.RunIfShim(args); ok {
//		return code
//	}
//
// and drivers start shims with
//
//	exe, exeArgs, err := shim.Command() // drover-shim beside drover, or drover; ["shim"]
//	h, err := shim.Start(ctx, exe, exeArgs, spec)
//
// Command uses drover-shim only when it reports this binary's Identity
// (`drover-shim shim -identity`): same version, protocol, State and exit
// file versions and wire types.
//
// Tests re-execute the test binary as the shim: in TestMain, when an
// environment variable is set, os.Exit(shim.Main(os.Args[1:])). Main's
// arguments must be the tail of os.Args.
//
// # Choosing paths
//
// StateDir should be one directory per task invocation, owned by the agent;
// TaskStateDir gives the one raw_exec and exec use
// (<AllocDir>/.shims/<task>-<invocation id>), and LogBases the log base
// paths from a TaskConfig. The driver removes the state dir after the exit
// was consumed. StreamStats serves a driver's TaskStats. The socket path
// must fit a unix address (107 bytes): SocketPathFor uses
// <StateDir>/shim.sock when it fits and a hashed name in os.TempDir()
// otherwise; an empty SocketPath in Spec means SocketPathFor(StateDir).
package shim
