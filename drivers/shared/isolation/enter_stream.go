package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/osthread"
)

// EnterIO is the stdio of a command EnterStart runs: the files it gets as
// fds 0, 1 and 2. With TTY, Stdin is a terminal, which becomes the
// command's controlling terminal.
type EnterIO struct {
	Stdin, Stdout, Stderr *os.File
	TTY                   bool
}

// Entered is a command running inside a task, started by EnterStart. Its
// starter must Wait for it.
type Entered struct {
	cmd *exec.Cmd
}

// Pid returns the command's pid as the host sees it.
func (e *Entered) Pid() int { return e.cmd.Process.Pid }

// Wait waits for the command to exit and reaps it.
func (e *Entered) Wait() (*os.ProcessState, error) {
	err := e.cmd.Wait()
	return e.cmd.ProcessState, err
}

// Kill kills the command and every process of its session's process
// group (it leads both).
func (e *Entered) Kill() error {
	return syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
}

// EnterStart starts spec inside the running task st as Enter does — in its
// pid, ipc, uts and network namespaces, its root and its cgroup, as
// spec's user (in a task with a user namespace, the host IDs they map
// to, as in Enter), with every signal at its default disposition and none
// blocked — in a new session, with stdio as its stdin, stdout and stderr,
// and returns once it runs (or could not start: a command that is not
// found is an error). ctx bounds the start only.
func EnterStart(ctx context.Context, init InitCommand, st State, spec *EnterSpec, stdio EnterIO) (*Entered, error) {
	if spec == nil || spec.Path == "" {
		return nil, errors.New("enter task: no command")
	}
	if st.Cgroup == nil || !Alive(st.Pid, st.StartTime) {
		return nil, fmt.Errorf("enter task: process %d: %w", st.Pid, os.ErrNotExist)
	}
	spec, err := forTask(st, spec)
	if err != nil {
		return nil, fmt.Errorf("enter task: %w", err)
	}
	var cmd *exec.Cmd
	// As in Enter: the thread joins the task's namespaces and exits
	// afterwards. The child outlives the thread that forked it; no
	// parent-death signal is armed.
	osthread.Throwaway(func() {
		cmd, err = startInTask(ctx, init, st, spec, func(cmd *exec.Cmd) {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: stdio.TTY, Ctty: 0}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("enter task: %w", err)
	}
	return &Entered{cmd: cmd}, nil
}

// startInTask joins the task's namespaces on this (locked) thread and
// starts the enter stage from it with spec, setup having set the command's
// stdio and SysProcAttr. It returns once the stage has execve'd the
// command.
func startInTask(ctx context.Context, init InitCommand, st State, spec *EnterSpec, setup func(*exec.Cmd)) (*exec.Cmd, error) {
	var fds []*os.File
	defer func() {
		for _, f := range fds {
			f.Close()
		}
	}()
	for _, ns := range enterNamespaces {
		f, err := os.Open("/proc/" + strconv.Itoa(st.Pid) + "/ns/" + ns.name)
		if err != nil {
			return nil, fmt.Errorf("open %s namespace: %w", ns.name, err)
		}
		fds = append(fds, f)
	}
	// The namespaces are pinned by the open files: check that they are
	// still the task's (its pid was not reused meanwhile).
	if !Alive(st.Pid, st.StartTime) {
		return nil, fmt.Errorf("process %d: %w", st.Pid, os.ErrNotExist)
	}
	for i, ns := range enterNamespaces {
		if err := unix.Setns(int(fds[i].Fd()), ns.flag); err != nil {
			return nil, fmt.Errorf("join %s namespace: %w", ns.name, err)
		}
	}
	s := *spec
	s.Root = "/proc/" + strconv.Itoa(st.Pid) + "/root"

	cmd := exec.Command(init.Path, append(append([]string(nil), init.Args...), enterArg)...)
	setup(cmd)
	if _, err := launch(ctx, cmd, st.Cgroup, &s); err != nil {
		return nil, err
	}
	return cmd, nil
}
