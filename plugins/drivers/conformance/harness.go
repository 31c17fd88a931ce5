package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// harness is one check's driver and the helpers every check uses.
type harness struct {
	t    *testing.T
	d    drivers.DriverPlugin
	spec *Spec
}

var taskSeq atomic.Int64

func newHarness(t *testing.T, newDriver func(t *testing.T) drivers.DriverPlugin, spec *Spec) *harness {
	t.Helper()
	d := newDriver(t)
	if d == nil {
		t.Fatal("newDriver returned nil")
	}
	return &harness{t: t, d: d, spec: spec}
}

// ctx returns a context bounded by the spec's timeout.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), h.spec.timeout())
	h.t.Cleanup(cancel)
	return ctx
}

// config builds a task config for raw in a fresh alloc dir laid out as the
// client lays it out.
func (h *harness) config(raw json.RawMessage) *drivers.TaskConfig {
	h.t.Helper()
	if len(raw) == 0 {
		h.t.Fatal("spec lacks a task config for this check")
	}
	alloc := h.t.TempDir()
	name := "web"
	taskDir := filepath.Join(alloc, name)
	td := drivers.TaskDir{
		Dir:        taskDir,
		LocalDir:   filepath.Join(taskDir, "local"),
		SecretsDir: filepath.Join(taskDir, "secrets"),
		SharedDir:  filepath.Join(alloc, "alloc"),
		LogDir:     filepath.Join(alloc, "alloc", "logs"),
	}
	for _, dir := range []string{td.LocalDir, td.SecretsDir, td.LogDir, filepath.Join(td.SharedDir, "data"), filepath.Join(td.SharedDir, "tmp")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			h.t.Fatal(err)
		}
	}
	allocID := fmt.Sprintf("conformance-%d", taskSeq.Add(1))
	cfg := &drivers.TaskConfig{
		ID:            allocID + "/" + name + "/1",
		JobName:       "conformance",
		JobID:         "conformance",
		TaskGroupName: "group",
		Name:          name,
		Namespace:     "default",
		AllocID:       allocID,
		Env: map[string]string{
			"NOMAD_TASK_NAME": name,
			"NOMAD_ALLOC_ID":  allocID,
			"PATH":            "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		},
		Resources:  &drivers.Resources{CPUShares: 100, MemoryMB: 64},
		AllocDir:   alloc,
		TaskDir:    td,
		StdoutPath: filepath.Join(td.LogDir, name+".stdout.0"),
		StderrPath: filepath.Join(td.LogDir, name+".stderr.0"),
		RawConfig:  raw,
	}
	if h.spec.Adjust != nil {
		h.spec.Adjust(cfg)
	}
	return cfg
}

// start starts a task and, when the check ends, force-destroys it.
func (h *harness) start(raw json.RawMessage) (*drivers.TaskConfig, *drivers.TaskHandle) {
	h.t.Helper()
	cfg := h.config(raw)
	th, err := h.d.StartTask(h.ctx(), cfg)
	if err != nil {
		h.t.Fatalf("StartTask: %v", err)
	}
	if th == nil {
		h.t.Fatal("StartTask returned a nil handle")
	}
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), h.spec.timeout())
		defer cancel()
		err := h.d.DestroyTask(ctx, cfg.ID, true)
		if err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			h.t.Errorf("cleanup: DestroyTask(force): %v", err)
		}
	})
	return cfg, th
}

// wait waits for the task's exit and checks that the channel then closes.
func (h *harness) wait(id string) *drivers.ExitResult {
	h.t.Helper()
	ch, err := h.d.WaitTask(h.ctx(), id)
	if err != nil {
		h.t.Fatalf("WaitTask: %v", err)
	}
	res := h.receiveExit(ch)
	h.expectClosed(ch)
	return res
}

func (h *harness) receiveExit(ch <-chan *drivers.ExitResult) *drivers.ExitResult {
	h.t.Helper()
	timer := time.NewTimer(h.spec.timeout())
	defer timer.Stop()
	select {
	case res, ok := <-ch:
		if !ok {
			h.t.Fatal("WaitTask channel closed without an exit result")
		}
		if res == nil {
			h.t.Fatal("WaitTask delivered a nil exit result")
		}
		return res
	case <-timer.C:
		h.t.Fatalf("no exit result within %s", h.spec.timeout())
	}
	return nil
}

// expectClosed checks that ch closes, without a further value, soon.
func (h *harness) expectClosed(ch <-chan *drivers.ExitResult) {
	h.t.Helper()
	timer := time.NewTimer(h.spec.timeout())
	defer timer.Stop()
	select {
	case res, ok := <-ch:
		if ok {
			h.t.Fatalf("WaitTask channel delivered a second value %+v; want it closed", res)
		}
	case <-timer.C:
		h.t.Fatalf("WaitTask channel not closed within %s of its value", h.spec.timeout())
	}
}

// inspect returns the task's status, failing the check on error.
func (h *harness) inspect(id string) *drivers.TaskStatus {
	h.t.Helper()
	st, err := h.d.InspectTask(h.ctx(), id)
	if err != nil {
		h.t.Fatalf("InspectTask: %v", err)
	}
	if st == nil {
		h.t.Fatal("InspectTask returned a nil status")
	}
	return st
}

// eventually polls cond until it holds or the spec's timeout passes.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(h.spec.timeout())
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// running reports whether the driver says the task runs.
func (h *harness) running(id string) bool {
	h.t.Helper()
	return h.inspect(id).State == drivers.TaskStateRunning
}
