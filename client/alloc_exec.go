package client

import (
	"context"

	"github.com/drover-io/drover/plugins/drivers"
)

// ExecAlloc runs an interactive command inside a running task of an
// allocation on this node (alloc exec) and returns the command's exit.
// The driver owns opts.Stdin for the call and closes it.
func (c *Client) ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
		return nil, err
	}
	return ar.ExecTask(ctx, task, opts)
}
