package docker

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// execPollInterval is how often a finished exec's exit code is re-read
// while the daemon still reports it running.
const execPollInterval = 50 * time.Millisecond

// ExecTask runs cmd in the container and returns its output and exit
// code. A timeout above zero bounds the whole call.
func (d *Driver) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	if len(cmd) == 0 {
		return nil, fmt.Errorf("exec task %q: empty command", t.cfg.Name)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	execID, err := d.client.createExec(ctx, t.containerID, cmd)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	body, err := d.client.startExec(ctx, execID)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	var stdout, stderr bytes.Buffer
	err = demux(&stdout, &stderr, body)
	body.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("exec task %q: read output: %w", t.cfg.Name, err)
	}
	// The output ends when the command exits; the daemon records the exit
	// code a moment later.
	for {
		running, code, err := d.client.inspectExec(ctx, execID)
		if err != nil {
			return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
		}
		if !running {
			return &drivers.ExecTaskResult{
				Stdout:     stdout.Bytes(),
				Stderr:     stderr.Bytes(),
				ExitResult: &drivers.ExitResult{ExitCode: code},
			}, nil
		}
		if !sleepCtx(ctx, execPollInterval) {
			return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, ctx.Err())
		}
	}
}
