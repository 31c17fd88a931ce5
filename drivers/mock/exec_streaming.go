package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.ExecStreamingPlugin = (*Driver)(nil)

// ExecTaskStreaming runs no command: with TTY it writes "size HxW\n" to
// stdout for the initial terminal size (when set) and each one received;
// it writes the task's exec_command stdout_string to stdout, then echoes
// stdin to stdout until stdin ends, and returns exec_command's exit code
// (0 without one). It fails for
// a task that has exited. Cancelling ctx ends it with ctx's error.
func (d *Driver) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	select {
	case <-t.done:
		return nil, fmt.Errorf("exec task %q: the task has exited", t.cfg.Name)
	default:
	}
	stdout := opts.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	// The echo and the size reports share stdout.
	var mu sync.Mutex
	write := func(p []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := stdout.Write(p)
		return err
	}
	if s := opts.InitialSize; opts.TTY && s != (drivers.TerminalSize{}) {
		if err := write(fmt.Appendf(nil, "size %dx%d\n", s.Height, s.Width)); err != nil {
			return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
		}
	}
	ec := t.conf.ExecCommand
	if ec != nil && ec.StdoutString != "" {
		if err := write([]byte(ec.StdoutString)); err != nil {
			return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
		}
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	if opts.TTY && opts.Resize != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case s, ok := <-opts.Resize:
					if !ok {
						return
					}
					_ = write(fmt.Appendf(nil, "size %dx%d\n", s.Height, s.Width))
				}
			}
		}()
	}
	echoed := make(chan error, 1)
	if opts.Stdin == nil {
		echoed <- nil
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := opts.Stdin.Read(buf)
				if n > 0 {
					if werr := write(buf[:n]); werr != nil {
						echoed <- werr
						return
					}
				}
				if err != nil {
					if errors.Is(err, io.EOF) {
						err = nil
					}
					echoed <- err
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		if opts.Stdin != nil {
			opts.Stdin.Close()
		}
		wg.Wait()
	}()
	select {
	case err := <-echoed:
		if err != nil {
			return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, ctx.Err())
	}
	res := &drivers.ExitResult{}
	if ec != nil {
		res.ExitCode = ec.ExitCode
	}
	return res, nil
}
