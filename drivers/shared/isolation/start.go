package isolation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// InitArg is the argument that puts the drover binary in init-stage mode:
// "drover isolation-init".
const InitArg = "isolation-init"

// InitCommand is how to run the init stage: a binary and the arguments
// that make it call InitMain.
type InitCommand struct {
	Path string
	Args []string
}

// DefaultInitCommand returns this binary with InitArg.
func DefaultInitCommand() (InitCommand, error) {
	exe, err := os.Executable()
	if err != nil {
		return InitCommand{}, fmt.Errorf("find the drover binary for the isolation init stage: %w", err)
	}
	return InitCommand{Path: exe, Args: []string{InitArg}}, nil
}

// State is what a parent needs to find an isolated process again, e.g.
// after an agent restart. It serialises to JSON.
type State struct {
	Pid int `json:"pid"`
	// StartTime is the process's start in clock ticks after boot.
	StartTime uint64  `json:"start_time"`
	Cgroup    *Cgroup `json:"cgroup"`
}

// Process is an isolated process started by Start. The caller is its
// parent and must Wait for it.
type Process struct {
	State
	cmd *exec.Cmd
}

// Wait waits for the process to exit and reaps it.
func (p *Process) Wait() (*os.ProcessState, error) {
	err := p.cmd.Wait()
	return p.cmd.ProcessState, err
}

// Start runs spec isolated: the init stage starts in new namespaces, joins
// cg before it runs anything of the task's, builds the root and execve's
// the command. Start returns once the command runs (or failed to start);
// stdout and stderr (nil: /dev/null) receive its output.
func Start(ctx context.Context, init InitCommand, spec *Spec, cg *Cgroup, stdout, stderr *os.File) (*Process, error) {
	if err := spec.validate(); err != nil {
		return nil, fmt.Errorf("isolated start: invalid spec: %w", err)
	}
	if cg == nil {
		return nil, errors.New("isolated start: no cgroup")
	}
	cmd := exec.Command(init.Path, init.Args...)
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setsid:     true,
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
	}
	if spec.NetworkIsolation {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	}
	payload := spec
	var passed []*os.File
	if spec.UserNS != nil {
		var err error
		payload, passed, err = prepareUserNS(spec) // userns_start.go
		if err != nil {
			return nil, fmt.Errorf("isolated start: %w", err)
		}
		defer func() {
			for _, f := range passed {
				f.Close()
			}
		}()
		fd := firstPassedFD + len(passed)
		f, path, err := passInit(init.Path, fd)
		if err != nil {
			return nil, fmt.Errorf("isolated start: %w", err)
		}
		passed = append(passed, f)
		cmd.Path, payload.InitFD = path, fd
		setUserNS(cmd.SysProcAttr, spec)
	}
	start, err := launch(ctx, cmd, cg, payload, passed...)
	if err != nil {
		return nil, fmt.Errorf("isolated start: %w", err)
	}
	return &Process{State: State{Pid: cmd.Process.Pid, StartTime: start, Cgroup: cg}, cmd: cmd}, nil
}

// launch starts cmd (the init stage, in whatever namespaces its
// SysProcAttr asks for), places it in cg, sends it payload on fd 3 and
// waits until it has execve'd the command, or reports why it could not on
// fd 4. passed are handed to it as fds 5 and on. It returns the process's
// start time. On error nothing of it is left running.
func launch(ctx context.Context, cmd *exec.Cmd, cg *Cgroup, payload any, passed ...*os.File) (uint64, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer specW.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		specR.Close()
		return 0, err
	}
	defer errR.Close()

	cmd.Dir = "/"
	// The stage's own environment (the command gets the spec's): one P,
	// so that its Go runtime starts fewer threads, each of which costs a
	// clone and a turn on a loaded CPU before the command runs.
	cmd.Env = []string{"GOMAXPROCS=1"}
	cmd.ExtraFiles = append([]*os.File{specR, errW}, passed...) // fds 3, 4, 5...
	// On v2 the kernel creates the process inside the cgroup; on v1 it is
	// moved there while the init stage waits for its payload.
	if cg.Version == CgroupV2 {
		dir, err := cg.openDir()
		if err != nil {
			specR.Close()
			errW.Close()
			return 0, fmt.Errorf("open cgroup: %w", err)
		}
		defer dir.Close()
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(dir.Fd())
	}
	err = cmd.Start()
	specR.Close()
	errW.Close()
	if err != nil {
		return 0, fmt.Errorf("start init stage: %w", err)
	}
	abort := func(err error) (uint64, error) {
		_ = cmd.Process.Kill() // it is ours and has not run the command
		_ = cmd.Wait()
		return 0, err
	}
	if cg.Version == CgroupV1 {
		if err := cg.Apply(cmd.Process.Pid); err != nil {
			return abort(err)
		}
	}
	start, err := ProcessStartTime(cmd.Process.Pid)
	if err != nil {
		return abort(err)
	}
	if err := json.NewEncoder(specW).Encode(payload); err != nil && !errors.Is(err, syscall.EPIPE) {
		return abort(fmt.Errorf("send spec to init stage: %w", err))
	}
	specW.Close()

	// The error pipe closes on execve (close-on-exec) or carries why the
	// init stage failed.
	type result struct {
		msg []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(errR)
		done <- result{b, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
		return 0, ctx.Err()
	}
	if res.err != nil {
		return abort(fmt.Errorf("read init stage status: %w", res.err))
	}
	if len(res.msg) > 0 {
		_ = cmd.Wait()
		return 0, errors.New(strings.TrimSpace(string(res.msg)))
	}
	return start, nil
}
