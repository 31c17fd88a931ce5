package isolation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/osthread"
)

// enterArg makes InitMain enter a running task instead of starting one.
const enterArg = "enter"

// EnterSpec is a command to run inside a running isolated task.
type EnterSpec struct {
	// Path, Args, Env and Dir are as in Spec: Path is seen from inside the
	// task's root.
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	Env  []string `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	// UID, GID and Groups the command runs as.
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	// Capabilities as in Spec; give the task's.
	Capabilities []string `json:"capabilities,omitempty"`

	// Root is the task's root as the host sees it ("/proc/<pid>/root");
	// Enter fills it in.
	Root string `json:"root"`
}

// onHost returns a copy of s with its IDs, which are the task's inside its
// user namespace ns, replaced by the host's.
func (s *EnterSpec) onHost(ns *UserNS) (*EnterSpec, error) {
	out := *s
	var ok bool
	if out.UID, ok = ns.HostUID(s.UID); !ok {
		return nil, fmt.Errorf("uid %d does not exist in the task's user namespace", s.UID)
	}
	if out.GID, ok = ns.HostGID(s.GID); !ok {
		return nil, fmt.Errorf("gid %d does not exist in the task's user namespace", s.GID)
	}
	out.Groups = nil
	for _, g := range s.Groups {
		if h, ok := ns.HostGID(g); ok {
			out.Groups = append(out.Groups, h)
		}
	}
	return &out, nil
}

// forTask returns spec as the enter stage must run it in task st: a Go
// process cannot join a user namespace, so in a task that has one the
// command runs as the host IDs the task's IDs map to (root in the task:
// nobody), and can do no more than the task.
func forTask(st State, spec *EnterSpec) (*EnterSpec, error) {
	ns, err := taskIDMaps(st.Pid)
	if err != nil || ns == nil {
		return spec, err
	}
	return spec.onHost(ns)
}

// namespaces joined by Enter with setns(2), in this order. The mount
// namespace cannot be joined by a multi-threaded (Go) process: the command
// gets the task's root through /proc/<pid>/root instead, which reaches
// the task's mounts.
var enterNamespaces = []struct {
	name string
	flag int
}{
	{"ipc", unix.CLONE_NEWIPC},
	{"uts", unix.CLONE_NEWUTS},
	{"net", unix.CLONE_NEWNET},
	{"pid", unix.CLONE_NEWPID},
}

// Enter runs spec inside the running task st — its pid, ipc, uts and
// network namespaces, its root and its cgroup — as the init stage does for
// the task itself, and waits for it to exit. Cancelling ctx kills the
// command. Its output goes to stdout and stderr.
func Enter(ctx context.Context, init InitCommand, st State, spec *EnterSpec, stdout, stderr io.Writer) (*os.ProcessState, error) {
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
	var ps *os.ProcessState
	// setns changes this thread only, and the child is forked from it.
	osthread.Throwaway(func() {
		ps, err = enterFromThisThread(ctx, init, st, spec, stdout, stderr)
	})
	if err != nil {
		return nil, fmt.Errorf("enter task: %w", err)
	}
	return ps, nil
}

func enterFromThisThread(ctx context.Context, init InitCommand, st State, spec *EnterSpec, stdout, stderr io.Writer) (*os.ProcessState, error) {
	cmd, err := startInTask(ctx, init, st, spec, func(cmd *exec.Cmd) {
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	})
	if err != nil {
		return nil, err
	}
	waited := make(chan struct{})
	defer close(waited)
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill() // ours until Wait returns
		case <-waited:
		}
	}()
	err = cmd.Wait()
	if cmd.ProcessState == nil {
		return nil, err
	}
	return cmd.ProcessState, nil
}

// enterMain is InitMain's enter mode: it reads an EnterSpec, chroots into
// the task's root, drops privileges and execve's the command.
func enterMain(specPipe, errPipe *os.File) int {
	fail := func(err error) int {
		fmt.Fprintf(errPipe, "%v", err)
		return 127
	}
	var spec EnterSpec
	err := json.NewDecoder(specPipe).Decode(&spec)
	specPipe.Close()
	if err != nil {
		return fail(fmt.Errorf("enter stage: read spec: %w", err))
	}
	if err := os.Chdir(spec.Root); err != nil {
		return fail(fmt.Errorf("enter stage: task root: %w", err))
	}
	if err := unix.Chroot("."); err != nil {
		return fail(fmt.Errorf("enter stage: chroot: %w", err))
	}
	runtime.LockOSThread()
	caps := spec.Capabilities
	if caps == nil {
		caps = DefaultCapabilities()
	}
	if err := dropCapabilities(caps); err != nil {
		return fail(fmt.Errorf("enter stage: %w", err))
	}
	if err := dropThreadPrivileges(spec.UID, spec.GID, spec.Groups); err != nil {
		return fail(fmt.Errorf("enter stage: %w", err))
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fail(fmt.Errorf("enter stage: working directory %s: %w", dir, err))
	}
	path, err := lookPath(spec.Path, spec.Env)
	if err != nil {
		return fail(fmt.Errorf("enter stage: %w", err))
	}
	if err := DefaultSignals(); err != nil {
		return fail(fmt.Errorf("enter stage: %w", err))
	}
	if err := installSeccomp(); err != nil { // seccomp.go
		return fail(fmt.Errorf("enter stage: %w", err))
	}
	syscall.CloseOnExec(errFD)
	err = syscall.Exec(path, append([]string{spec.Path}, spec.Args...), spec.Env)
	return fail(fmt.Errorf("enter stage: exec %s: %w", path, err))
}
