package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
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
	if s, err := t.h.Status(ctx); err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	} else if s.Exit != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, shim.ErrTaskExited)
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
	ps, err := isolation.Enter(ctx, initCmd, isolationState(t.h.State()), &isolation.EnterSpec{
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
