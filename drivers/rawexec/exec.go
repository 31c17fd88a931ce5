package rawexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// ExecTask runs cmd in the task's directory with the task's environment and
// user, and returns its output and exit. A timeout (or ctx) kills it.
func (d *Driver) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	if len(cmd) == 0 {
		return nil, fmt.Errorf("exec task %q: empty command", t.cfg.Name)
	}
	path, err := resolveCommand(cmd[0], t.cfg.TaskDir.Dir, t.cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	cred, err := credential(t.cfg.User)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}

	c := exec.CommandContext(ctx, path, cmd[1:]...)
	c.Env = taskEnv(t.cfg.Env)
	c.Dir = t.cfg.TaskDir.Dir
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	// Stop copying output shortly after the command exits, even if
	// something it started still holds the pipes.
	c.WaitDelay = time.Second

	err = c.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, ctx.Err())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	return &drivers.ExecTaskResult{
		Stdout:     stdout.Bytes(),
		Stderr:     stderr.Bytes(),
		ExitResult: exitResult(c.ProcessState, err),
	}, nil
}

// exitResult turns a wait status into an ExitResult; a process killed by a
// signal reports ExitCode 128+signal as a shell would.
func exitResult(state *os.ProcessState, waitErr error) *drivers.ExitResult {
	if state == nil {
		return &drivers.ExitResult{Err: fmt.Errorf("wait: %w", waitErr)}
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return &drivers.ExitResult{ExitCode: state.ExitCode()}
	}
	if ws.Signaled() {
		sig := int(ws.Signal())
		return &drivers.ExitResult{ExitCode: 128 + sig, Signal: sig}
	}
	return &drivers.ExitResult{ExitCode: ws.ExitStatus()}
}

// credential returns the credential to run as name; nil for "" (the
// agent's own user).
func credential(name string) (*syscall.Credential, error) {
	if name == "" {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("running as user %q needs the agent to run as root; remove \"user\" from the task or run the agent as root", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("look up task user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: invalid uid %q", name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: invalid gid %q", name, u.Gid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return cred, nil
}
