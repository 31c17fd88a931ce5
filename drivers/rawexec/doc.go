// Package rawexec is the raw_exec task driver: it runs the task's command
// as a plain process on the host, with no isolation, supervised by a task
// shim (drivers/shared/shim) so that the task survives restarts of the
// agent. Having no isolation, it ignores the group's network mode
// (drivers.TaskConfig.NetworkMode): its tasks always share the host's
// network, even in a group with mode = "none".
//
// Where it sits in the data flow: the client's driver manager offers it as
// "raw_exec"; a TaskRunner calls it through drivers.DriverPlugin and
// persists the returned TaskHandle, whose DriverState is the shim's State
// (state.go). After an agent restart, RecoverTask re-attaches to the shim
// with shim.Attach: a task still running is supervised again (same pid), a
// task that exited meanwhile reports the exit the shim recorded, and a shim
// that died without recording one yields an error wrapping both
// drivers.ErrTaskNotFound and shim.ErrShimDied, so the client starts the
// task again under its restart policy.
//
//	TaskRunner ─▶ Driver ─▶ shim.Start / shim.Attach ─▶ shim process ─▶ task
//
// Config block:
//
//	command  the program to run (required); a bare name is looked up in the
//	         task's PATH, then in the task directory; a relative path is
//	         taken from the task directory
//	args     its arguments
//
// Both may reference the task's environment (${NOMAD_TASK_DIR}, ${PORT}).
//
// Paths (shim.LogBases, shim.TaskStateDir, shared with exec): the task's
// output goes to "<LogDir>/<task>.stdout.<n>" and ".stderr.<n>", rotated by
// the shim within the task's logs block (LogMaxFiles, LogMaxFileSizeMB). The
// client passes StdoutPath as the first file ("<task>.stdout.0"); the driver
// strips the ".0" to get the rotation's base name. Each invocation's shim
// keeps its spec, exit record and log in
// "<AllocDir>/.shims/<task>-<invocation id>" (mode 0700, outside every
// task's directory); DestroyTask removes it, and it goes with the alloc
// directory in any case.
//
// Signals: SignalTask reaches the task's main process; StopTask signals
// the whole process group and kills it after the timeout. The stop is
// carried out by the shim, so it completes even if the agent dies.
package rawexec
