package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// promptly bounds how long a cancelled wait or stream may take to end.
const promptly = 5 * time.Second

// check is one conformance check, run as a subtest with a fresh driver.
type check struct {
	name string
	run  func(h *harness)
	// skip says why the check does not apply, "" when it does.
	skip func(h *harness) string
}

// RunConformance runs the conformance checks against the drivers newDriver
// returns, each as a subtest with a fresh driver (newDriver should register
// its own cleanup, e.g. killing a plugin process). See Spec for what the
// driver's tasks must do.
func RunConformance(t *testing.T, newDriver func(t *testing.T) drivers.DriverPlugin, spec *Spec) {
	t.Helper()
	if spec == nil {
		t.Fatal("conformance: nil spec")
	}
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, newDriver, spec)
			if c.skip != nil {
				if why := c.skip(h); why != "" {
					t.Skip(why)
				}
			}
			c.run(h)
		})
	}
}

func checks() []check {
	return []check{
		{name: "Identity", run: checkIdentity},
		{name: "Fingerprint", run: checkFingerprint},
		{name: "ExitZero", run: checkExitZero},
		{name: "ExitThree", run: checkExitThree},
		{name: "WaitAfterExit", run: checkWaitAfterExit},
		{name: "Stop", run: checkStop},
		{name: "WaitCancel", run: checkWaitCancel},
		{name: "Destroy", run: checkDestroy},
		{name: "UnknownTask", run: checkUnknownTask},
		{name: "Signal", run: checkSignal, skip: func(h *harness) string {
			switch {
			case h.spec.SkipSignal:
				return "spec skips signals"
			case !h.d.Capabilities().SendSignals:
				return "driver does not send signals"
			}
			return ""
		}},
		{name: "Stats", run: checkStats, skip: func(h *harness) string {
			if h.spec.SkipStats {
				return "spec skips stats"
			}
			return ""
		}},
		{name: "Recover", run: checkRecover, skip: func(h *harness) string {
			if h.spec.SkipRecover {
				return "spec skips recovery"
			}
			return ""
		}},
		{name: "Exec", run: checkExec, skip: func(h *harness) string {
			switch {
			case h.spec.ExecCommand == nil:
				return "spec has no exec command"
			case !h.d.Capabilities().Exec:
				return "driver does not exec"
			}
			return ""
		}},
		{name: "ExecStreaming", run: checkExecStreaming, skip: skipExecStreaming}, // exec_streaming.go
	}
}

func checkIdentity(h *harness) {
	if h.d.Name() == "" {
		h.t.Error("Name is empty")
	}
	caps := h.d.Capabilities()
	if caps == nil {
		h.t.Fatal("Capabilities is nil")
	}
	switch caps.FSIsolation {
	case "none", "chroot", "image":
	default:
		h.t.Errorf("Capabilities.FSIsolation = %q, want none, chroot or image", caps.FSIsolation)
	}
}

func checkFingerprint(h *harness) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := h.d.Fingerprint(ctx)
	if err != nil {
		h.t.Fatalf("Fingerprint: %v", err)
	}
	timer := time.NewTimer(h.spec.timeout())
	defer timer.Stop()
	select {
	case fp, ok := <-ch:
		if !ok || fp == nil {
			h.t.Fatal("Fingerprint channel closed before its first fingerprint")
		}
		if fp.Health != drivers.HealthStateHealthy {
			h.t.Fatalf("first fingerprint is %q (%s), want healthy", fp.Health, fp.HealthDescription)
		}
	case <-timer.C:
		h.t.Fatalf("no fingerprint within %s", h.spec.timeout())
	}
	cancel()
	expectStreamEnds(h.t, ch, "Fingerprint")
}

func checkExitZero(h *harness) {
	cfg, th := h.start(h.spec.ExitZero)
	if th.Config == nil || th.Config.ID != cfg.ID {
		h.t.Errorf("handle's config is %+v, want the task's config (ID %q)", th.Config, cfg.ID)
	}
	res := h.wait(cfg.ID)
	if !res.Successful() {
		h.t.Fatalf("exit = %+v, want successful", res)
	}
	st := h.inspect(cfg.ID)
	if st.State != drivers.TaskStateExited {
		h.t.Errorf("InspectTask state = %q after exit, want %q", st.State, drivers.TaskStateExited)
	}
	if st.ID != cfg.ID {
		h.t.Errorf("InspectTask ID = %q, want %q", st.ID, cfg.ID)
	}
	if st.ExitResult == nil || st.ExitResult.ExitCode != 0 {
		h.t.Errorf("InspectTask exit result = %+v, want exit code 0", st.ExitResult)
	}
	if st.StartedAt.IsZero() {
		h.t.Error("InspectTask StartedAt is unset")
	}
	// An exited task is destroyed without force.
	if err := h.d.DestroyTask(h.ctx(), cfg.ID, false); err != nil {
		h.t.Fatalf("DestroyTask of an exited task: %v", err)
	}
	if _, err := h.d.InspectTask(h.ctx(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
		h.t.Fatalf("InspectTask after destroy: err = %v, want ErrTaskNotFound", err)
	}
}

func checkExitThree(h *harness) {
	cfg, _ := h.start(h.spec.ExitThree)
	res := h.wait(cfg.ID)
	if res.ExitCode != 3 || res.Signal != 0 || res.Err != nil {
		h.t.Fatalf("exit = %+v, want exit code 3", res)
	}
	if res.Successful() {
		h.t.Fatal("exit code 3 reported as successful")
	}
	h.eventually("task reported exited", func() bool { return h.inspect(cfg.ID).State == drivers.TaskStateExited })
	if st := h.inspect(cfg.ID); st.ExitResult == nil || st.ExitResult.ExitCode != 3 {
		h.t.Errorf("InspectTask exit result = %+v, want exit code 3", st.ExitResult)
	}
}

// checkWaitAfterExit: a wait started after the exit still gets the result.
func checkWaitAfterExit(h *harness) {
	cfg, _ := h.start(h.spec.ExitThree)
	first := h.wait(cfg.ID)
	second := h.wait(cfg.ID)
	if second.ExitCode != first.ExitCode {
		h.t.Fatalf("second wait = %+v, first = %+v", second, first)
	}
}

func checkStop(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	if !h.running(cfg.ID) {
		h.t.Fatalf("task not running after start: %+v", h.inspect(cfg.ID))
	}
	ch, err := h.d.WaitTask(h.ctx(), cfg.ID)
	if err != nil {
		h.t.Fatalf("WaitTask: %v", err)
	}
	if err := h.d.StopTask(h.ctx(), cfg.ID, h.spec.stopTimeout(), ""); err != nil {
		h.t.Fatalf("StopTask: %v", err)
	}
	res := h.receiveExit(ch)
	h.expectClosed(ch)
	if res.Err != nil {
		h.t.Errorf("stopped task's exit has error %v", res.Err)
	}
	h.t.Logf("stopped task exit: code %d signal %d", res.ExitCode, res.Signal)
	h.eventually("task reported exited", func() bool { return h.inspect(cfg.ID).State == drivers.TaskStateExited })
	// Stopping again is safe.
	if err := h.d.StopTask(h.ctx(), cfg.ID, h.spec.stopTimeout(), ""); err != nil {
		h.t.Fatalf("second StopTask: %v", err)
	}
}

// checkWaitCancel: cancelling a wait ends it promptly and leaves the task.
func checkWaitCancel(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.d.WaitTask(ctx, cfg.ID)
	if err != nil {
		cancel()
		h.t.Fatalf("WaitTask: %v", err)
	}
	cancel()
	timer := time.NewTimer(promptly)
	defer timer.Stop()
	select {
	case res, ok := <-ch:
		if ok {
			h.t.Fatalf("cancelled wait delivered %+v; want the channel closed", res)
		}
	case <-timer.C:
		h.t.Fatalf("cancelled WaitTask channel not closed within %s", promptly)
	}
	if !h.running(cfg.ID) {
		h.t.Fatal("cancelling a wait stopped the task")
	}
}

func checkDestroy(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	if err := h.d.DestroyTask(h.ctx(), cfg.ID, false); err == nil {
		h.t.Fatal("DestroyTask of a running task without force succeeded")
	}
	if !h.running(cfg.ID) {
		h.t.Fatal("refused DestroyTask stopped the task")
	}
	if err := h.d.DestroyTask(h.ctx(), cfg.ID, true); err != nil {
		h.t.Fatalf("DestroyTask(force): %v", err)
	}
	if _, err := h.d.InspectTask(h.ctx(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
		h.t.Fatalf("InspectTask after destroy: err = %v, want ErrTaskNotFound", err)
	}
}

func checkUnknownTask(h *harness) {
	const id = "no-such-alloc/web/1"
	ctx := h.ctx()
	calls := []struct {
		name string
		call func() error
	}{
		{"WaitTask", func() error { _, err := h.d.WaitTask(ctx, id); return err }},
		{"StopTask", func() error { return h.d.StopTask(ctx, id, time.Second, "") }},
		{"DestroyTask", func() error { return h.d.DestroyTask(ctx, id, true) }},
		{"InspectTask", func() error { _, err := h.d.InspectTask(ctx, id); return err }},
		{"SignalTask", func() error { return h.d.SignalTask(ctx, id, "SIGHUP") }},
		{"TaskStats", func() error {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := h.d.TaskStats(sctx, id, time.Second)
			return err
		}},
		{"ExecTask", func() error { _, err := h.d.ExecTask(ctx, id, []string{"true"}, time.Second); return err }},
	}
	for _, c := range calls {
		err := c.call()
		if c.name == "ExecTask" && errors.Is(err, drivers.ErrNotSupported) {
			continue
		}
		if !errors.Is(err, drivers.ErrTaskNotFound) {
			h.t.Errorf("%s of an unknown task: err = %v, want ErrTaskNotFound", c.name, err)
		}
	}
}

func checkSignal(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	if err := h.d.SignalTask(h.ctx(), cfg.ID, h.spec.signal()); err != nil {
		h.t.Fatalf("SignalTask(%s): %v", h.spec.signal(), err)
	}
	if err := h.d.SignalTask(h.ctx(), cfg.ID, "SIGNOPE"); err == nil {
		h.t.Error("SignalTask with an unknown signal succeeded")
	}
	if !h.running(cfg.ID) {
		h.t.Fatalf("task not running after %s", h.spec.signal())
	}
}

func checkStats(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := h.d.TaskStats(ctx, cfg.ID, 100*time.Millisecond)
	if err != nil {
		h.t.Fatalf("TaskStats: %v", err)
	}
	timer := time.NewTimer(h.spec.timeout())
	defer timer.Stop()
	select {
	case u, ok := <-ch:
		if !ok || u == nil {
			h.t.Fatal("TaskStats channel closed before its first sample")
		}
		if u.Timestamp == 0 {
			h.t.Error("stats sample has no timestamp")
		}
	case <-timer.C:
		h.t.Fatalf("no stats sample within %s", h.spec.timeout())
	}
	cancel()
	expectStreamEnds(h.t, ch, "TaskStats")
}

func checkRecover(h *harness) {
	cfg, th := h.start(h.spec.RunForever)
	if err := h.d.RecoverTask(h.ctx(), th); err != nil {
		h.t.Fatalf("RecoverTask of a running task's handle: %v", err)
	}
	if !h.running(cfg.ID) {
		h.t.Fatal("task not running after RecoverTask")
	}
	// The recovered task is still the driver's to wait on and stop.
	ch, err := h.d.WaitTask(h.ctx(), cfg.ID)
	if err != nil {
		h.t.Fatalf("WaitTask after RecoverTask: %v", err)
	}
	if err := h.d.StopTask(h.ctx(), cfg.ID, h.spec.stopTimeout(), ""); err != nil {
		h.t.Fatalf("StopTask after RecoverTask: %v", err)
	}
	h.receiveExit(ch)
	h.expectClosed(ch)
}

func checkExec(h *harness) {
	cfg, _ := h.start(h.spec.RunForever)
	res, err := h.d.ExecTask(h.ctx(), cfg.ID, h.spec.ExecCommand, h.spec.timeout())
	if err != nil {
		h.t.Fatalf("ExecTask(%q): %v", h.spec.ExecCommand, err)
	}
	if res == nil || res.ExitResult == nil || !res.ExitResult.Successful() {
		h.t.Fatalf("ExecTask(%q) = %+v, want a successful exit", h.spec.ExecCommand, res)
	}
}

// expectStreamEnds drains ch after its context was cancelled and fails if
// it does not close promptly.
func expectStreamEnds[T any](t *testing.T, ch <-chan T, name string) {
	t.Helper()
	timer := time.NewTimer(promptly)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timer.C:
			t.Fatalf("%s channel not closed within %s of its context's end", name, promptly)
		}
	}
}
