package drivermanager

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.ExecStreamingPlugin = (*proxy)(nil)

// ExecTaskStreaming runs an interactive command on the current instance,
// without retry (its stdin cannot be replayed); a driver without streaming
// exec gives drivers.ErrNotSupported.
func (p *proxy) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	d, _, err := p.current(ctx, 0)
	if err != nil {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
		return nil, err
	}
	esp, ok := d.(drivers.ExecStreamingPlugin)
	if !ok {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
		return nil, fmt.Errorf("driver %q: interactive exec: %w", p.name, drivers.ErrNotSupported)
	}
	return esp.ExecTaskStreaming(ctx, taskID, opts)
}
