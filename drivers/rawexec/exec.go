package rawexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
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
