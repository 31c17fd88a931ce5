package taskrunner

import (
	"context"
	"fmt"
)

// untrusted runs a driver call that is given ctx and returns when the call
// does or when ctx is done, whichever comes first, so that a driver that
// ignores its context cannot hang the runner. A call given up on this way
// keeps running in its goroutine until the driver returns; its result is
// dropped. Only calls whose late completion is harmless go through here
// (stop, destroy, signal), never StartTask, whose late handle would be lost.
func untrusted(ctx context.Context, what string, call func(ctx context.Context) error) error {
	done := make(chan error, 1) // buffered: an abandoned call never blocks
	go func() { done <- call(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: driver did not return: %w", what, ctx.Err())
	}
}
