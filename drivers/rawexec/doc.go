// Package rawexec is the raw_exec task driver: it runs the task's command
// as a plain process on the host, with no isolation, in its own process
// group so that stopping the task signals everything it started.
//
// Where it sits in the data flow: the client's driver manager offers it as
// "raw_exec"; a TaskRunner calls it through drivers.DriverPlugin, persists
// the returned handle (pid and process start time) and, after an agent
// restart, re-attaches with RecoverTask.
//
// Config block:
//
//	command  the program to run (required); a bare name is looked up in the
//	         task's PATH, a relative path is taken from the task directory
//	args     its arguments
//
// Both may reference the task's environment (${NOMAD_TASK_DIR}, ${PORT}).
//
// Process supervision (process.go, procfs.go) is kept apart from the
// plugin methods so that it can move into a per-task shim process.
package rawexec
