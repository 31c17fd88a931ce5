package command

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/drover-io/drover/api"
)

// exitInterrupted is the exit code of an exec ended by Ctrl-C (128+SIGINT).
const exitInterrupted = 130

func runAllocExec(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc exec", "[options] <alloc-id|job-id> <command> [args...]", `
Run a command inside a running task of an allocation and attach to it:
its output is printed, your input is sent to it, and its exit code becomes
this command's. For the exec driver the command runs in the task's
namespaces, root, cgroup and user; for docker in its container; for
raw_exec in the task's directory with its environment and user.

With -t (the default when stdin is a terminal) the command runs on a
terminal: your terminal is put in raw mode, so that Ctrl-C and the like
reach the command, and its size follows yours. Type the escape character
(-e, default ~) at the start of a line, then '.', to disconnect.
Without a terminal, Ctrl-C ends the session, which kills the command.

With -job the first argument is a job ID and a running allocation of the
job is chosen. The task may be left out when the allocation's group has
one task.

The session goes to the agent of the node that runs the allocation: the
agent at -address may be any agent, which forwards it to that node's.`)
	task := fset.String("task", "", "The task to run the command in.")
	job := fset.Bool("job", false, "The first argument is a job ID: use a running allocation of the job.")
	stdinOpt := fset.Bool("i", true, "Pass stdin to the command.")
	ttyOpt := fset.Bool("t", false, "Run the command on a terminal (default: when stdin is a terminal).")
	escape := fset.String("e", "~", `The escape character ("none" to disable): at the start of a line, followed by '.', it disconnects.`)
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 2 {
		return m.usageError(fset, "this command takes an allocation (or, with -job, a job) and the command to run")
	}
	escapeChar, err := parseEscape(*escape)
	if err != nil {
		return m.usageError(fset, err.Error())
	}
	ttySet := false
	fset.Visit(func(f *flag.Flag) { ttySet = ttySet || f.Name == "t" })

	c := m.apiClient()
	if c == nil {
		return exitError
	}
	var alloc *api.Allocation
	var code int
	if *job {
		alloc, code = m.runningJobAlloc(c, fset.Arg(0))
	} else {
		alloc, code = m.lookupAlloc(c, fset.Arg(0), *verbose)
	}
	if alloc == nil {
		return code
	}
	name := *task
	if name == "" {
		tasks := allocTasks(alloc)
		if len(tasks) != 1 {
			fmt.Fprintf(m.stderr, "Error: allocation %s has %d tasks (%s): name the task with -task\n",
				shortID(alloc.ID, *verbose), len(tasks), strings.Join(tasks, ", "))
			return exitError
		}
		name = tasks[0]
	} else if !m.checkTask(alloc, name) {
		return exitError
	}

	term := m.terminal()
	tty := *ttyOpt
	if !ttySet {
		tty = term != nil
	}
	if tty && term == nil {
		fmt.Fprintln(m.stderr, "Error: -t needs a terminal on stdin and stdout; leave it out to run without one")
		return exitError
	}

	// cancel detaches (the escape); a signal (Ctrl-C without a terminal,
	// which then reaches this process) ends the session too. Either kills
	// the command.
	detached, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx, stop := signal.NotifyContext(detached, os.Interrupt, syscall.SIGTERM)
	defer stop()
	req := &api.ExecRequest{Task: name, Command: fset.Args()[1:], TTY: tty, Stdout: m.stdout, Stderr: m.stderr}
	if *stdinOpt {
		in, restore, err := interruptibleStdin(m.stdin)
		if err != nil {
			fmt.Fprintf(m.stderr, "Error: read stdin: %v\n", err)
			return exitError
		}
		defer restore()
		req.Stdin = in
	} else {
		req.Stdin = bytes.NewReader(nil) // closed at once
	}
	if tty {
		restore, err := term.makeRaw()
		if err != nil {
			fmt.Fprintf(m.stderr, "Error: put the terminal in raw mode: %v\n", err)
			return exitError
		}
		defer restore()
		// Watched before the size is read: no change is missed.
		sizes, stop := term.sizes(ctx)
		defer stop()
		req.Resize = sizes
		if size, err := term.size(); err == nil {
			req.Size = size
		}
		if escapeChar != 0 {
			req.Stdin = &escapeReader{r: req.Stdin, escape: escapeChar, detach: cancel, lineStart: true}
		}
	}

	exitCode, err := c.Allocations().Exec(ctx, alloc.ID, req, nil)
	switch {
	case err == nil:
		return exitCode
	case ctx.Err() != nil && detached.Err() == nil:
		return exitInterrupted
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(m.stderr, "\r\nDisconnected.")
		return exitError
	default:
		fmt.Fprintf(m.stderr, "\r\n%s\n", errorText(fmt.Sprintf("running the command in task %q of allocation %s", name, shortID(alloc.ID, *verbose)), err))
		return exitError
	}
}

// runningJobAlloc returns a running allocation of the job, the most
// recently created first.
func (m *Meta) runningJobAlloc(c *api.Client, jobID string) (*api.Allocation, int) {
	stubs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil, m.fail(fmt.Sprintf("querying the allocations of job %q", jobID), err)
	}
	var best *api.AllocationListStub
	for _, s := range stubs {
		if s.ClientStatus == api.AllocClientStatusRunning && (best == nil || s.CreateIndex > best.CreateIndex) {
			best = s
		}
	}
	if best == nil {
		fmt.Fprintf(m.stderr, "Error: job %q has no running allocation (see `drover job status %s`)\n", jobID, jobID)
		return nil, exitError
	}
	alloc, _, err := c.Allocations().Info(best.ID, nil)
	if err != nil {
		return nil, m.fail(fmt.Sprintf("querying allocation %q", best.ID), err)
	}
	return alloc, exitOK
}

// parseEscape reads -e: one character, or "none" for no escape.
func parseEscape(s string) (byte, error) {
	switch {
	case s == "none":
		return 0, nil
	case len(s) == 1:
		return s[0], nil
	}
	return 0, fmt.Errorf(`-e must be one character, or "none": got %q`, s)
}

// escapeReader watches a terminal's input for the escape character at the
// start of a line: followed by '.', it detaches (and ends the input);
// doubled, it sends the character once; followed by anything else, both
// go through.
type escapeReader struct {
	r      io.Reader
	escape byte
	detach func()

	lineStart bool   // the next byte starts a line
	pending   bool   // the escape character was read at a line's start
	rest      []byte // what is read and not yet returned
	err       error  // the end of the input, once rest is returned
}

// Read reads from the terminal, acting on escapes.
func (e *escapeReader) Read(p []byte) (int, error) {
	for len(e.rest) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		buf := make([]byte, max(len(p), 1))
		n, err := e.r.Read(buf)
		e.err = err
		e.filter(buf[:n])
	}
	n := copy(p, e.rest)
	e.rest = e.rest[n:]
	return n, nil
}

// filter appends what in sends to rest.
func (e *escapeReader) filter(in []byte) {
	for _, b := range in {
		switch {
		case e.pending:
			e.pending = false
			switch b {
			case '.':
				e.detach()
				e.err = io.EOF
				return
			case e.escape:
				e.rest = append(e.rest, b)
			default:
				e.rest = append(e.rest, e.escape, b)
			}
		case e.lineStart && b == e.escape:
			e.pending = true
			continue
		default:
			e.rest = append(e.rest, b)
		}
		e.lineStart = b == '\r' || b == '\n'
	}
}

// Close closes the terminal's input, when it can be closed.
func (e *escapeReader) Close() error {
	if c, ok := e.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
