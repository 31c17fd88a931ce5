// Package execstream wires the stdio of an interactive command run inside
// a task (drivers.ExecStreamingPlugin, `alloc exec`) for drivers that start
// the command as a host process: raw_exec and exec. Third-party drivers may
// use it too.
//
// Open makes a pseudo-terminal (ExecOptions.TTY) or three pipes; the driver
// starts the command with Files as its stdio (on a terminal, in a new
// session with the terminal as its controlling one) and hands the started
// process to Run, which copies the caller's stdin in, the output out and
// terminal sizes to the terminal until the command exits, kills it when
// the caller's context ends, and converts its wait status. Run owns every
// goroutine it starts and waits for them before it returns.
package execstream
