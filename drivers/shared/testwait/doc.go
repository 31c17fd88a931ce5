// Package testwait is for tests that wait on real processes and the files
// they write: a task's exit, a line in its log, a file it creates. It
// waits on the kernel's own events (a pidfd for an exit, inotify for a
// file) rather than polling, so a test wakes when the thing happens, on a
// loaded machine as on an idle one.
//
// Where it sits: only tests import it (the drivers', the shim's, the
// plugins' and the agent's), for what has no event of the product's own to
// wait on (a driver's WaitTask channel is preferred where it answers).
// Every wait is bounded by Bound, a limit for a hung test, never a timing
// a test relies on.
package testwait
