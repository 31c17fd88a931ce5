package shim

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestWaitResultHoldsNoGoroutine: while a started shim's task runs, a
// WaitTask (WaitResult) costs no goroutine of its own in the agent (only
// the shim's reaper runs), and the result still comes when the task
// exits.
func TestWaitResultHoldsNoGoroutine(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	before := goleak.IgnoreCurrent() // the shim's reaper among them
	ch := h.WaitResult(ctxT(t), "web")
	if err := goleak.Find(before); err != nil {
		t.Fatalf("WaitResult left a goroutine waiting:\n%v", err)
	}
	if err := h.Stop(ctxT(t), "SIGTERM", 0); err != nil {
		t.Fatal(err)
	}
	res, ok := <-ch
	if !ok {
		t.Fatal("no result")
	}
	if res.Signal != int(syscall.SIGTERM) || res.Err != nil {
		t.Errorf("result = %+v, want SIGTERM and no error", res)
	}
	if _, ok := <-ch; ok {
		t.Error("a second value")
	}
}

// TestWaitResultAbandoned: a WaitResult whose ctx ends closes its channel
// without a value, and another one still gets the exit.
func TestWaitResultAbandoned(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	abandoned := h.WaitResult(ctx, "web")
	kept := h.WaitResult(ctxT(t), "web")
	cancel()
	if res, ok := <-abandoned; ok {
		t.Fatalf("abandoned wait got %+v", res)
	}
	if err := syscall.Kill(h.State().TaskPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res, ok := <-kept
	if !ok || res.Signal != int(syscall.SIGKILL) || res.Err != nil {
		t.Fatalf("result = %+v (%v), want SIGKILL", res, ok)
	}
	// After the shim is gone, Wait and WaitResult answer at once.
	if e, err := h.Wait(ctxT(t)); err != nil || e.Signal != int(syscall.SIGKILL) {
		t.Errorf("Wait = %+v, %v", e, err)
	}
	if res, ok := <-h.WaitResult(ctxT(t), "web"); !ok || res.Signal != int(syscall.SIGKILL) {
		t.Errorf("late WaitResult = %+v (%v)", res, ok)
	}
}

// TestWaitOfAKilledShimWithoutRecord: Wait on a started shim killed
// before it recorded the exit reports ErrShimDied (it learns it from the
// reaper, not from a connection).
func TestWaitOfAKilledShimWithoutRecord(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	if err := syscall.Kill(h.State().ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(ctxT(t)); !errors.Is(err, ErrShimDied) {
		t.Fatalf("Wait: %v, want ErrShimDied", err)
	}
}

// TestAttachedShimWatched: after an agent restart (Attach), the shim is
// watched through a pidfd: WaitResult holds no connection nor goroutine
// of its own, and the exit still comes.
func TestAttachedShimWatched(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	st := roundTrip(t, startShim(t, spec).State()) // the Handle is dropped
	waitForLog(t, spec.StdoutPath, "ready")
	h, err := Attach(ctxT(t), st)
	if err != nil {
		t.Fatal(err)
	}
	if h.reaper == nil {
		t.Fatal("an attached shim is not watched")
	}
	before := goleak.IgnoreCurrent() // the watcher among them
	ch := h.WaitResult(ctxT(t), "web")
	if err := goleak.Find(before); err != nil {
		t.Fatalf("WaitResult left a goroutine waiting:\n%v", err)
	}
	if err := syscall.Kill(h.State().TaskPID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res, ok := <-ch
	if !ok || res.Signal != int(syscall.SIGTERM) || res.Err != nil {
		t.Fatalf("result = %+v (%v), want SIGTERM", res, ok)
	}
}
