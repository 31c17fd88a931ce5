package drivers

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// MaxTerminalDimension bounds a terminal's height and width, in rows and
// columns (the kernel's winsize holds 16-bit values).
const MaxTerminalDimension = 1<<16 - 1

// ExecStreamingPlugin is implemented by drivers that can run an interactive
// command inside a running task (alloc exec). It is optional: the client
// answers drivers.ErrNotSupported for a driver without it.
type ExecStreamingPlugin interface {
	// ExecTaskStreaming runs opts.Command in the running task taskID, in
	// the task's context as ExecTask does (its namespaces, root, cgroup,
	// user and environment), wiring the command's stdio to opts. It
	// returns the command's ExitResult once the command has exited and
	// its output has been written, or an error when the command could not
	// be run (an ErrTaskNotFound-wrapped one for an unknown task, a
	// clear one for a task that is not running or a command that is not
	// found). Cancelling ctx kills the command, never the task.
	//
	// The driver owns opts.Stdin for the call: it reads it until EOF
	// (which closes the command's stdin) and closes it before returning,
	// which must make a pending Read return. It writes the output to
	// opts.Stdout and opts.Stderr from its own goroutines, all finished
	// when it returns.
	ExecTaskStreaming(ctx context.Context, taskID string, opts *ExecOptions) (*ExitResult, error)
}

// ExecOptions is an interactive command to run in a task.
type ExecOptions struct {
	// Command is the program and its arguments; the program is looked up
	// in the task's PATH when it has no slash.
	Command []string
	// TTY runs the command on a pseudo-terminal: Stdout receives the
	// terminal's output (stdout and stderr together), Stderr nothing.
	TTY bool
	// Stdin is the command's input (nil: none, the command reads EOF).
	Stdin io.ReadCloser
	// Stdout and Stderr receive the command's output; nil discards it.
	Stdout io.Writer
	Stderr io.Writer
	// Resize carries the terminal's new sizes (TTY only; nil: none). A
	// size that is not Valid is skipped.
	Resize <-chan TerminalSize
	// InitialSize is the terminal's size when the command starts (TTY
	// only); the zero value leaves the driver's default (24x80).
	InitialSize TerminalSize
}

// Validate reports what is wrong with opts, for a clear error before
// anything runs.
func (o *ExecOptions) Validate() error {
	if o == nil || len(o.Command) == 0 || o.Command[0] == "" {
		return errors.New("exec: no command given: name the program to run (and its arguments)")
	}
	if o.InitialSize != (TerminalSize{}) {
		if err := o.InitialSize.Validate(); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
	}
	return nil
}

// TerminalSize is a terminal's size in rows and columns.
type TerminalSize struct {
	Height int
	Width  int
}

// Validate reports whether both dimensions are between 1 and
// MaxTerminalDimension.
func (s TerminalSize) Validate() error {
	if s.Height < 1 || s.Width < 1 || s.Height > MaxTerminalDimension || s.Width > MaxTerminalDimension {
		return fmt.Errorf("invalid terminal size %dx%d (height x width): both must be between 1 and %d",
			s.Height, s.Width, MaxTerminalDimension)
	}
	return nil
}
