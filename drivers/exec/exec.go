package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// ExecTask runs cmd inside the running task: in its pid, ipc, uts and
// network namespaces, its root, its cgroup, as its user and with its
// environment, and returns its output and exit. A bare command name is
// looked up in the task's PATH inside its root. A timeout (or ctx) kills
// it. The command stays in the host's mount namespace but sees only the
// task's root.
func (d *Driver) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	if len(cmd) == 0 {
		return nil, fmt.Errorf("exec task %q: empty command", t.cfg.Name)
	}
	if t.proc.exitedYet() {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, errProcessExited)
	}
	userName := d.opts.DefaultUser
	if t.cfg.User != "" {
		userName = t.cfg.User
	}
	uid, gid, groups, err := isolation.LookupUser(userName)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var stdout, stderr bytes.Buffer
	ps, err := isolation.Enter(ctx, initCmd, t.proc.st, &isolation.EnterSpec{
		Path:   cmd[0],
		Args:   cmd[1:],
		Env:    envList(rootEnv(t.cfg)),
		Dir:    "/",
		UID:    uid,
		GID:    gid,
		Groups: groups,
		// The task's own capabilities, no more.
		Capabilities: d.opts.Capabilities,
	}, &stdout, &stderr)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	return &drivers.ExecTaskResult{
		Stdout:     stdout.Bytes(),
		Stderr:     stderr.Bytes(),
		ExitResult: exitResult(ps, errors.New("no exit status")),
	}, nil
}
