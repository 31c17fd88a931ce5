package shim

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/drover-io/drover/drivers/shared/testwait"
)

// writeSpecOnly leaves a state dir as an agent that died between writing
// the spec and launching the shim would.
func writeSpecOnly(t *testing.T, spec *Spec) {
	t.Helper()
	if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(filepath.Join(spec.StateDir, specFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFindRunningShim: a shim whose State the agent never saved is found
// from its state dir and attached to.
func TestFindRunningShim(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	st := startShim(t, spec).State() // the agent "dies" before saving st
	live, err := Live(spec.StateDir)
	if err != nil || !live {
		t.Fatalf("Live = %v, %v; want a live shim", live, err)
	}
	h, err := Find(ctxT(t), spec.StateDir)
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	if got := h.State(); got.ShimPID != st.ShimPID || got.TaskPID != st.TaskPID || got.SocketPath != st.SocketPath {
		t.Errorf("found %+v, want %+v", got, st)
	}
	s, err := h.Status(ctxT(t))
	if err != nil || !s.Running {
		t.Fatalf("Status = %+v, %v", s, err)
	}
	if err := h.Stop(ctxT(t), "SIGTERM", 0); err != nil {
		t.Fatal(err)
	}
	if e, err := h.Wait(ctxT(t)); err != nil || e.Signal != int(syscall.SIGTERM) {
		t.Errorf("Wait = %+v, %v; want SIGTERM", e, err)
	}
}

// TestFindExitedShim: the task exited and its shim with it; Find reports
// the recorded exit.
func TestFindExitedShim(t *testing.T) {
	spec := testSpec(t, `exit 7`)
	st := startShim(t, spec).State()
	testwait.Exit(t, "shim to exit", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
	if live, err := Live(spec.StateDir); err != nil || live {
		t.Errorf("Live = %v, %v; want no live shim", live, err)
	}
	if ran, err := Published(spec.StateDir); err != nil || !ran {
		t.Errorf("Published = %v, %v; want the state of a shim that started its task", ran, err)
	}
	h, err := Find(ctxT(t), spec.StateDir)
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	if e, err := h.Wait(ctxT(t)); err != nil || e.ExitCode != 7 {
		t.Errorf("Wait = %+v, %v; want exit 7", e, err)
	}
}

// TestFindNeverStarted: a spec nobody launched a shim for (the agent died
// in between) is fenced: Find says no shim started, and a shim launched
// late cannot take the spec and start the task.
func TestFindNeverStarted(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, spec *Spec)
	}{
		{"no state dir", func(*testing.T, *Spec) {}},
		{"empty state dir", func(t *testing.T, spec *Spec) {
			if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"spec written, no shim", writeSpecOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, "exit 0")
			tt.setup(t, spec)
			if ran, err := Published(spec.StateDir); err != nil || ran {
				t.Errorf("Published = %v, %v; want none", ran, err)
			}
			_, err := Find(ctxT(t), spec.StateDir)
			if !errors.Is(err, ErrNotStarted) {
				t.Fatalf("Find = %v, want ErrNotStarted", err)
			}
			if _, err := os.Stat(filepath.Join(spec.StateDir, specFile)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the spec is still there (%v): a late shim could start the task", err)
			}
			if f, err := lockSpec(spec.StateDir); err == nil {
				f.Close()
				t.Error("a shim launched after Find could take the spec")
			}
			if err := Abandon(ctxT(t), spec.StateDir); err != nil {
				t.Errorf("Abandon of a shim that never started = %v", err)
			}
		})
	}
}

// TestFindWaitsForAStartingShim: while a shim holds the spec but has not
// published its state, Find waits (here: until its context ends); once
// the shim is gone without a state, Find fences the spec.
func TestFindWaitsForAStartingShim(t *testing.T) {
	spec := testSpec(t, "exit 0")
	writeSpecOnly(t, spec)
	starting, err := lockSpec(spec.StateDir) // plays the starting shim
	if err != nil {
		t.Fatal(err)
	}
	if live, err := Live(spec.StateDir); err != nil || !live {
		t.Errorf("Live = %v, %v; want a live (starting) shim", live, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Find(ctx, spec.StateDir); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotStarted) {
		t.Errorf("Find while a shim starts = %v, want it waiting until its context ends", err)
	}
	if _, err := os.Stat(filepath.Join(spec.StateDir, specFile)); err != nil {
		t.Errorf("Find removed the spec of a starting shim: %v", err)
	}
	starting.Close() // the shim failed before it started the task
	if _, err := Find(ctxT(t), spec.StateDir); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Find after the shim gave up = %v, want ErrNotStarted", err)
	}
}

// TestAbandonStopsTheTask: a shim nobody should have is made to kill its
// task.
func TestAbandonStopsTheTask(t *testing.T) {
	spec := testSpec(t, `trap "" TERM INT; echo ready; while :; do sleep 1; done`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	if err := Abandon(ctxT(t), spec.StateDir); err != nil {
		t.Fatalf("Abandon: %v", err)
	}
	e, err := h.Wait(ctxT(t))
	if err != nil || e.Signal != int(syscall.SIGKILL) {
		t.Errorf("Wait = %+v, %v; want SIGKILL", e, err)
	}
	if !pidGone(h.State().TaskPID) {
		t.Error("the task still runs")
	}
}

// TestWaitResultOfAKilledShim: a task whose shim was SIGKILLed is
// reported killed by SIGKILL (the kernel's parent-death signal), never
// with exit code 0.
func TestWaitResultOfAKilledShim(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	if err := syscall.Kill(h.State().ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res, ok := <-h.WaitResult(ctxT(t), "web")
	if !ok {
		t.Fatal("no result")
	}
	if res.ExitCode != 137 || res.Signal != int(syscall.SIGKILL) || !errors.Is(res.Err, ErrShimDied) || res.Successful() {
		t.Errorf("result = %+v, want exit 137, SIGKILL and ErrShimDied", res)
	}
}
