package rawexec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/execstream"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.ExecStreamingPlugin = (*Driver)(nil)

// ExecTaskStreaming runs opts.Command as ExecTask does (in the task's
// directory, with its environment and user), on a terminal with opts.TTY,
// streaming its stdio, in a session of its own that is killed as a whole
// when ctx ends.
func (d *Driver) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	if s, err := t.h.Status(ctx); err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	} else if s.Exit != nil {
		return nil, fmt.Errorf("exec task %q: %w: start it again (alloc restart) before exec'ing into it", t.cfg.Name, shim.ErrTaskExited)
	}
	path, err := resolveCommand(opts.Command[0], t.cfg.TaskDir.Dir, t.cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	cred, err := credential(t.cfg.User)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	stdio, err := execstream.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	c := exec.Command(path, opts.Command[1:]...)
	c.Args[0] = opts.Command[0]
	c.Env = execstream.Env(taskEnv(t.cfg.Env), opts)
	c.Dir = t.cfg.TaskDir.Dir
	c.Stdin, c.Stdout, c.Stderr = stdio.Files()
	// A session of its own: the command is killed with what it starts,
	// and on a terminal it is the terminal's session.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred, Setctty: stdio.TTY()}
	if err := c.Start(); err != nil {
		stdio.Close()
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	res, err := stdio.Run(ctx, sessionProcess{c})
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	return res, nil
}

// sessionProcess is a command that leads its own session (and process
// group): Kill kills the group.
type sessionProcess struct{ cmd *exec.Cmd }

func (p sessionProcess) Wait() (*os.ProcessState, error) {
	err := p.cmd.Wait()
	return p.cmd.ProcessState, err
}

func (p sessionProcess) Kill() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
