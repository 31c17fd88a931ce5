package shim

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// WaitResult serves a driver's WaitTask: the returned channel receives the
// task's ExitResult once and closes; if ctx is done first it closes
// without a value. When the shim died without recording the exit, the
// result is ShimDiedResult (Err wraps ErrShimDied); another failure to
// learn the exit gives exit code -1 and Err. task names the task in these
// errors. The goroutine it starts ends with the task or ctx.
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
		case errors.Is(err, ErrShimDied):
			ch <- ShimDiedResult(task, err)
		default:
			// The exit is unknown: never report it as a success.
			ch <- &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("task %q: %w", task, err)}
		}
	}()
	return ch
}

// ShimDiedResult is the exit of a task whose shim died without recording
// it (err wraps ErrShimDied): the kernel SIGKILLed the task's main process
// as its shim died (its parent-death signal), and the Handle call that
// found the shim gone SIGKILLed the rest of the task (its process group,
// or its cgroup), so the task reads as killed by SIGKILL (exit code 137),
// with Err saying that its shim died. It is never a success.
func ShimDiedResult(task string, err error) *drivers.ExitResult {
	return &drivers.ExitResult{
		ExitCode: 128 + int(syscall.SIGKILL),
		Signal:   int(syscall.SIGKILL),
		Err:      fmt.Errorf("task %q: killed (SIGKILL) as its shim died; its own exit is unknown: %w", task, err),
	}
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
