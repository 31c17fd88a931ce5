package shim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// WaitResult serves a driver's WaitTask: the returned channel receives the
// task's ExitResult once and closes; if ctx is done first it closes without
// a value. When the shim died without recording the exit, the result is
// ShimDiedResult (Err wraps ErrShimDied); another failure to learn the exit
// gives exit code -1 and Err. task names the task in these errors.
//
// No goroutine waits for it: the goroutine that reaps or watches the shim
// delivers the result (or ctx's end closes the channel). Where the shim
// cannot be watched (see Wait), a goroutine waits until the task or ctx
// ends.
func (h *Handle) WaitResult(ctx context.Context, task string) <-chan *drivers.ExitResult {
	ch := make(chan *drivers.ExitResult, 1)
	if h.reaper != nil {
		var once sync.Once
		finish := func(res *drivers.ExitResult) {
			once.Do(func() {
				if res != nil {
					ch <- res
				}
				close(ch)
			})
		}
		stop := context.AfterFunc(ctx, func() { finish(nil) })
		h.reaper.afterGone(func() {
			if stop() {
				e, err := h.settle()
				finish(exitResult(task, e, err))
			}
		})
		return ch
	}
	go func() {
		defer close(ch)
		e, err := h.Wait(ctx)
		if ctx.Err() != nil && err != nil {
			return // abandoned: no value
		}
		ch <- exitResult(task, e, err)
	}()
	return ch
}

// exitResult is what Wait's outcome means to a driver's WaitTask.
func exitResult(task string, e *ExitStatus, err error) *drivers.ExitResult {
	switch {
	case err == nil && e != nil:
		return e.ExitResult()
	case errors.Is(err, ErrShimDied):
		return ShimDiedResult(task, err)
	case err == nil:
		err = errors.New("the shim recorded no exit")
	}
	// The exit is unknown: never report it as a success.
	return &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("task %q: %w", task, err)}
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
