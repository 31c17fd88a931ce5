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
	st, spec, initCmd, err := d.prepareExec(t, cmd, envList(rootEnv(t.cfg)))
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var stdout, stderr bytes.Buffer
	ps, err := isolation.Enter(ctx, initCmd, st, spec, &stdout, &stderr)
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

// execUserIDs are the host IDs of a task's user.
type execUserIDs struct {
	uid, gid uint32
	groups   []uint32
}

// prepareExec returns what an exec session of cmd with env in task t
// needs: the task's isolation state, the EnterSpec (the task's user and
// capabilities) and the init command. It asks nothing of the task's shim
// (a round trip to another process, at every exec): the task's process
// must run, as the kernel tells (isolation.Alive), or the error wraps
// shim.ErrTaskExited. The task's user is looked up once, by its first
// exec session.
func (d *Driver) prepareExec(t *task, cmd, env []string) (isolation.State, *isolation.EnterSpec, isolation.InitCommand, error) {
	st := isolationState(t.h.State())
	if !isolation.Alive(st.Pid, st.StartTime) {
		return st, nil, isolation.InitCommand{}, fmt.Errorf("%w: start it again (alloc restart) before exec'ing into it", shim.ErrTaskExited)
	}
	u, err := d.execUser(t)
	if err != nil {
		return st, nil, isolation.InitCommand{}, err
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return st, nil, isolation.InitCommand{}, err
	}
	return st, &isolation.EnterSpec{
		Path:   cmd[0],
		Args:   cmd[1:],
		Env:    env,
		Dir:    "/",
		UID:    u.uid,
		GID:    u.gid,
		Groups: u.groups,
		// The task's own capabilities, no more.
		Capabilities: d.opts.Capabilities,
	}, initCmd, nil
}

// execUser returns the IDs of task t's user (the driver's default user
// unless the task sets one), looked up at the first call; a failed
// lookup is tried again at the next.
func (d *Driver) execUser(t *task) (*execUserIDs, error) {
	t.userMu.Lock()
	defer t.userMu.Unlock()
	if t.user != nil {
		return t.user, nil
	}
	name := d.opts.DefaultUser
	if t.cfg.User != "" {
		name = t.cfg.User
	}
	uid, gid, groups, err := isolation.LookupUser(name)
	if err != nil {
		return nil, err
	}
	t.user = &execUserIDs{uid: uid, gid: gid, groups: groups}
	return t.user, nil
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
