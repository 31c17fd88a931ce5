// Package allocrunner runs one allocation on the node: it builds the alloc
// directory, runs one TaskRunner per task (prestart tasks first, then the
// main tasks, then, once those started, poststart tasks; poststop tasks
// after all others are dead), applies the group's rules between tasks (a
// dead leader or a failed task kills the others; sidecars are killed when
// the main tasks are dead), and reports the allocation's runtime state.
// Every kill takes the leader first, then the other tasks in parallel,
// then the sidecars.
//
// Where it sits in the data flow: client.Client creates an AllocRunner for
// each allocation the servers assign to the node, calls Run in a goroutine
// and passes later versions of the allocation to Update. TaskRunners report
// state changes to their AllocRunner, which derives the alloc's client
// status and reports it to the Client (StateUpdater), which batches it to
// the servers.
//
// Alloc hooks run in order: alloc_dir builds the directory; alloc_watcher
// (given allocwatcher's watchers by the Client) keeps the allocation pending
// until the allocations it preempts and the one it replaces have
// terminated, then migrates the previous one's data; alloc_health tracks
// deployment health (outside a deployment, a service allocation's health
// by its group's migrate block, which a node drain waits for; healthy after min_healthy_time of every task running
// without restarts, unhealthy on a failure, restart or healthy_deadline)
// with a pure tracker and an injected Clock, and reports it in AllocState's
// DeploymentStatus (with health_check "checks", the service checks must
// pass for min_healthy_time too); services registers the group's and the
// tasks' Nomad services with the servers (ServiceRegistrar) while their
// tasks run, deciding what to register with a pure function of the task
// states (desiredServices), and runs their checks (check_runner.go:
// http, tcp, script; check_restart restarts the task).
//
// What the runner decides or does that the tasks' states cannot tell
// again is persisted in the StateDB (state.AllocRunnerLocalState, see
// local_state.go) and loaded by Restore after an agent restart: the
// health verdict with its deployment (a restored runner keeps a verdict
// decided for the alloc's deployment, which the servers may already have
// acted on, instead of tracking health again) and whether the waits and
// the data migration of alloc_watcher completed (a restored runner never
// waits or migrates twice, even when the agent went down before a task
// started). The tasks' own state, hook states included, is restored by
// their TaskRunners. A restored runner publishes its state once when it
// runs, even if re-attaching changes no task's state: the agent that died
// may not have told the servers its last states.
//
// Operator restarts (alloc restart) never count against restart policies:
// RestartTask restarts one running task, RestartAll the running tasks, and
// RestartAllTasks (-all-tasks) runs the lifecycle again: runTasks, which
// owns the lifecycle, stops and holds the running tasks, re-arms the
// runners of the tasks that completed, then releases or reruns them phase
// by phase (prestart, main, poststart; never poststop).
//
// Alloc returns the immutable server-sent allocation; AllocState returns the
// runtime state (client status, task states, deployment health). Updates are serialized by a
// buffered channel and one goroutine, where only the latest pending update
// matters. Shutdown leaves tasks running; Destroy kills them and removes
// the alloc directory, and works even if Run was never called. The alloc
// directory is never removed from under a live task shim: one still
// running from it (an invocation nobody supervises) is stopped first, and
// if it cannot be, the directory stays.
package allocrunner
