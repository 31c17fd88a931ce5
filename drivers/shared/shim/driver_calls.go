package shim

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// WaitResult serves a driver's WaitTask: the returned channel receives the
// task's ExitResult once and closes; if ctx is done first it closes
// without a value. When the shim died without recording the exit, the
// result's Err wraps ErrShimDied. task names the task in that error. The
// goroutine it starts ends with the task or ctx.
func (h *Handle) WaitResult(ctx context.Context, task string) <-chan *drivers.ExitResult {
	ch := make(chan *drivers.ExitResult, 1)
	go func() {
		defer close(ch)
		e, err := h.Wait(ctx)
		switch {
		case err == nil:
			ch <- e.ExitResult()
		case ctx.Err() != nil:
			// Abandoned: no value.
		default:
			ch <- &drivers.ExitResult{Err: fmt.Errorf("task %q: %w", task, err)}
		}
	}()
	return ch
}

// CleanupAfterExit calls Cleanup at once and then every poll until it
// succeeds, which it does once the shim has exited (right after its task's
// exit is recorded), or until ctx ends; then it returns Cleanup's last
// error.
func (h *Handle) CleanupAfterExit(ctx context.Context, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		err := h.Cleanup()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}
