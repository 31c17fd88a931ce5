package rawexec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// TestDriver_RecoverTask simulates an agent restart: a new driver
// re-attaches to the running task from its handle alone.
func TestDriver_RecoverTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	st := shimState(t, th)

	// The same driver still holds it.
	if err := h.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask on the same driver: %v", err)
	}

	// A waiter of the old driver, connected before the restart.
	oldCtx, cancelOld := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelOld()
	oldWait, err := h.d.WaitTask(oldCtx, "t1")
	if err != nil {
		t.Fatal(err)
	}

	d2 := newDriver(t)
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	h.d = d2
	status, err := d2.InspectTask(context.Background(), "t1")
	if err != nil || status.State != drivers.TaskStateRunning {
		t.Fatalf("status = %+v, %v", status, err)
	}
	if got := status.DriverAttributes["pid"]; got != strconv.Itoa(st.TaskPID) || !running(st.TaskPID, st.TaskStartTicks) {
		t.Fatalf("re-attached pid %s, started pid %d", got, st.TaskPID)
	}
	if err := d2.SignalTask(context.Background(), "t1", "SIGCONT"); err != nil {
		t.Fatalf("SignalTask on a re-attached task: %v", err)
	}
	if err := d2.StopTask(context.Background(), "t1", 10*time.Second, ""); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	want := drivers.ExitResult{ExitCode: 130, Signal: 2}
	if res := waitResult(t, d2, "t1"); *res != want {
		t.Fatalf("re-attached result = %+v, want %+v", res, want)
	}
	if res := <-oldWait; res == nil || *res != want {
		t.Fatalf("old driver's result = %+v, want %+v", res, want)
	}
	if err := d2.DestroyTask(context.Background(), "t1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("shim state dir left behind: %v", err)
	}

	// Destroyed: nothing to re-attach to.
	err = newDriver(t).RecoverTask(context.Background(), th)
	if !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask of a destroyed task: %v", err)
	}
}

// TestDriver_RecoverExitedTask: the task exits while no driver is
// attached; the next driver learns its real exit code.
func TestDriver_RecoverExitedTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "echo ready; while [ ! -e go ]; do sleep 0.01; done; echo bye; exit 5")
	th := h.start(cfg)
	st := shimState(t, th)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")

	// The agent is down: release the task and wait for task and shim to go.
	h.d = nil
	if err := os.WriteFile(filepath.Join(cfg.TaskDir.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testwait.Exit(t, "task exit", st.TaskPID, func() bool { return running(st.TaskPID, st.TaskStartTicks) })
	testwait.Exit(t, "shim exit", st.ShimPID, func() bool { return running(st.ShimPID, st.ShimStartTicks) })

	h.d = newDriver(t)
	if err := h.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	if res := h.wait("t1"); *res != (drivers.ExitResult{ExitCode: 5}) {
		t.Fatalf("result = %+v, want exit 5", res)
	}
	status, err := h.d.InspectTask(context.Background(), "t1")
	if err != nil || status.State != drivers.TaskStateExited || status.ExitResult.ExitCode != 5 || status.CompletedAt.IsZero() {
		t.Fatalf("status = %+v, %v", status, err)
	}
	if err := h.d.SignalTask(context.Background(), "t1", "SIGHUP"); err == nil {
		t.Fatal("signalled an exited task")
	}
	if err := h.d.StopTask(context.Background(), "t1", time.Second, ""); err != nil {
		t.Fatalf("StopTask of an exited task: %v", err)
	}
	if b, _ := os.ReadFile(cfg.StdoutPath); string(b) != "ready\nbye\n" {
		t.Fatalf("stdout = %q", b)
	}
	if err := h.d.DestroyTask(context.Background(), "t1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("shim state dir left behind: %v", err)
	}
}

// TestDriver_ShimKilled: a shim SIGKILLed takes its task with it, and
// neither the driver holding it nor a new one pretends to know the exit.
func TestDriver_ShimKilled(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "sleep 30 & echo child=$!; exec sleep 30")
	th := h.start(cfg)
	st := shimState(t, th)
	testwait.FileContains(t, "child pid", cfg.StdoutPath, "child=")
	b, _ := os.ReadFile(cfg.StdoutPath)
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b), "child=")))
	if err != nil {
		t.Fatalf("parse child pid from %q: %v", b, err)
	}

	if err := syscall.Kill(st.ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.Exit(t, "shim gone", st.ShimPID, func() bool { return running(st.ShimPID, st.ShimStartTicks) })

	// The driver that held it.
	res := h.wait("t1")
	if res.Err == nil || !errors.Is(res.Err, shim.ErrShimDied) || !strings.Contains(res.Err.Error(), "shim exited without recording the task's exit") {
		t.Fatalf("result = %+v, want ErrShimDied", res)
	}
	if res.ExitCode != 137 || res.Signal != 9 {
		t.Errorf("result = exit %d signal %d, want the SIGKILL its shim's death dealt (137, 9), never 0", res.ExitCode, res.Signal)
	}
	testwait.Exit(t, "task killed", st.TaskPID, func() bool { return running(st.TaskPID, st.TaskStartTicks) })
	testwait.Exit(t, "the task's child killed", child, nil)
	status, err := h.d.InspectTask(context.Background(), "t1")
	if err != nil || status.State != drivers.TaskStateExited || !errors.Is(status.ExitResult.Err, shim.ErrShimDied) {
		t.Fatalf("status = %+v, %v", status, err)
	}

	// A new driver, as after an agent restart.
	err = newDriver(t).RecoverTask(context.Background(), th)
	if !errors.Is(err, drivers.ErrTaskNotFound) || !errors.Is(err, shim.ErrShimDied) {
		t.Fatalf("RecoverTask = %v, want ErrTaskNotFound and ErrShimDied", err)
	}
	if _, err := os.Stat(st.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dead shim's state dir left behind: %v", err)
	}
}

func TestDriver_RecoverTaskBadHandle(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	st := shimState(t, th)

	withState := func(mut func(*driverState)) *drivers.TaskHandle {
		c := *st
		ds := driverState{Version: handleVersion, Shim: &c}
		mut(&ds)
		bad := *th
		bad.DriverState, _ = json.Marshal(ds)
		return &bad
	}
	oldVersion := *th
	oldVersion.Version = 1
	junk := *th
	junk.DriverState = []byte("junk")
	noConfig := *th
	noConfig.Config = nil

	cases := []struct {
		name     string
		th       *drivers.TaskHandle
		notFound bool
	}{
		{"old handle version", &oldVersion, true},
		{"old state version", withState(func(ds *driverState) { ds.Version = 1 }), true},
		{"junk", &junk, false},
		{"no shim state", withState(func(ds *driverState) { ds.Shim = nil }), false},
		{"another task pid", withState(func(ds *driverState) { ds.Shim.TaskPID++ }), false},
		{"no config", &noConfig, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := newDriver(t).RecoverTask(context.Background(), tc.th)
			if err == nil || errors.Is(err, drivers.ErrTaskNotFound) != tc.notFound {
				t.Fatalf("err = %v, want an error (not found: %v)", err, tc.notFound)
			}
		})
	}
	if !running(st.TaskPID, st.TaskStartTicks) {
		t.Fatal("a failed recovery hurt the task")
	}
}

func TestDriver_RecoverKilledTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	oldWait, err := h.d.WaitTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	d2 := newDriver(t)
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	h.d = d2
	if err := d2.DestroyTask(context.Background(), "t1", true); err != nil {
		t.Fatal(err)
	}
	if res := <-oldWait; res == nil || res.Signal != 9 || res.ExitCode != 137 {
		t.Fatalf("result = %+v", res)
	}
}

// TestDriver_RecoverStartIntent: an agent that died during StartTask has
// only the start intent (a handle holding the config, no DriverState); a
// new driver finds the task from the config alone: running, exited, or
// killed with its shim; a task never started is reported not found.
func TestDriver_RecoverStartIntent(t *testing.T) {
	tests := []struct {
		name  string
		start bool                               // the dead agent's start got as far as the task
		then  func(t *testing.T, st *shim.State) // what happens while no driver is attached
		check func(t *testing.T, d *Driver, st *shim.State)
	}{
		{name: "running", start: true, check: func(t *testing.T, d *Driver, st *shim.State) {
			status, err := d.InspectTask(context.Background(), "t1")
			if err != nil || status.State != drivers.TaskStateRunning || status.DriverAttributes["pid"] != strconv.Itoa(st.TaskPID) {
				t.Fatalf("status = %+v, %v; want task pid %d running", status, err, st.TaskPID)
			}
			if err := d.StopTask(context.Background(), "t1", 10*time.Second, "SIGTERM"); err != nil {
				t.Fatal(err)
			}
			if res := waitResult(t, d, "t1"); *res != (drivers.ExitResult{ExitCode: 143, Signal: 15}) {
				t.Fatalf("result = %+v", res)
			}
		}},
		{name: "shim killed", start: true,
			then: func(t *testing.T, st *shim.State) {
				if err := syscall.Kill(st.ShimPID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				testwait.Exit(t, "shim gone", st.ShimPID, func() bool { return running(st.ShimPID, st.ShimStartTicks) })
				testwait.Exit(t, "task gone", st.TaskPID, func() bool { return running(st.TaskPID, st.TaskStartTicks) })
			},
			check: func(t *testing.T, d *Driver, st *shim.State) {
				res := waitResult(t, d, "t1")
				if res.ExitCode != 137 || res.Signal != 9 || !errors.Is(res.Err, shim.ErrShimDied) {
					t.Fatalf("result = %+v, want SIGKILL and ErrShimDied", res)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			cfg := h.config("t1", "sleep", "30")
			st := shimState(t, h.start(cfg))
			h.d = nil // the agent died before it saved the handle
			if tt.then != nil {
				tt.then(t, st)
			}
			d := newDriver(t)
			h.d = d
			if err := d.RecoverTask(context.Background(), &drivers.TaskHandle{Config: cfg, State: drivers.TaskStateUnknown}); err != nil {
				t.Fatalf("RecoverTask by intent: %v", err)
			}
			tt.check(t, d, st)
			if err := d.DestroyTask(context.Background(), "t1", true); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(st.StateDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("shim state dir left behind: %v", err)
			}
		})
	}
	t.Run("never started", func(t *testing.T) {
		h := newHarness(t)
		cfg := h.config("t1", "sleep", "30")
		err := newDriver(t).RecoverTask(context.Background(), &drivers.TaskHandle{Config: cfg})
		if !errors.Is(err, drivers.ErrTaskNotFound) || !errors.Is(err, shim.ErrNotStarted) {
			t.Fatalf("RecoverTask = %v, want ErrTaskNotFound and ErrNotStarted", err)
		}
	})
}
