package exec

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/drivers/shared/execstream"
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.ExecStreamingPlugin = (*Driver)(nil)

// ExecTaskStreaming runs opts.Command inside the running task as ExecTask
// does — its pid, ipc, uts and network namespaces, its root, its cgroup,
// its user, capabilities and environment — on a terminal with opts.TTY,
// streaming its stdio. The agent enters the task itself (isolation
// EnterStart, the enter stage run from drover-shim); the task's shim is
// not involved. Cancelling ctx kills the command's session, never the
// task.
func (d *Driver) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	st, spec, initCmd, err := d.prepareExec(t, opts.Command, execstream.Env(envList(rootEnv(t.cfg)), opts))
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	stdio, err := execstream.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	in, out, errOut := stdio.Files()
	p, err := isolation.EnterStart(ctx, initCmd, st, spec, isolation.EnterIO{Stdin: in, Stdout: out, Stderr: errOut, TTY: stdio.TTY()})
	if err != nil {
		stdio.Close()
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	res, err := stdio.Run(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	return res, nil
}
