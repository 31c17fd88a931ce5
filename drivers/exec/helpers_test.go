package exec

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// needIsolation skips unless the test can create namespaces and cgroups.
func needIsolation(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the exec driver needs root")
	}
	if _, err := isolation.DetectCgroups(); err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
}

// newDriver returns a driver whose shim and init stage are this test
// binary and
// whose cgroups live under a test parent.
func newDriver(t *testing.T, opts ...Option) *Driver {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]Option{
		WithOptions(Options{CgroupParent: testCgroupParent, UserNamespace: true}),
		WithInitCommand(exe, []string{isolation.InitArg}),
		WithShimCommand(exe, []string{shim.Subcommand}),
	}, opts...)
	return New(nil, all...)
}

// harness starts tasks and force-destroys them when the test ends.
type harness struct {
	t *testing.T
	d *Driver
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	needIsolation(t)
	return &harness{t: t, d: newDriver(t, opts...)}
}

// config returns a task config running command args in a fresh alloc dir
// laid out as the client's allocdir does it.
func (h *harness) config(command string, args ...string) *drivers.TaskConfig {
	h.t.Helper()
	alloc := h.t.TempDir()
	raw, err := json.Marshal(TaskConfig{Command: command, Args: args})
	if err != nil {
		h.t.Fatal(err)
	}
	taskDir := filepath.Join(alloc, "web")
	shared := filepath.Join(alloc, "alloc")
	for _, d := range []struct {
		path string
		perm os.FileMode
	}{
		{taskDir, 0o755},
		{filepath.Join(taskDir, "local"), 0o777 | os.ModeSticky},
		{filepath.Join(taskDir, "tmp"), 0o777 | os.ModeSticky},
		{filepath.Join(taskDir, "secrets"), 0o700},
		{shared, 0o777 | os.ModeSticky},
		{filepath.Join(shared, "logs"), 0o755},
	} {
		if err := os.MkdirAll(d.path, 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.Chmod(d.path, d.perm); err != nil {
			h.t.Fatal(err)
		}
	}
	// The alloc ID names the task's cgroup: unique, so that runs of these
	// tests in other processes (another checkout's, a -count repeat whose
	// cleanup lags) never share one.
	id := strings.ReplaceAll(h.t.Name(), "/", "_") + "-" + rand.Text()[:8]
	return &drivers.TaskConfig{
		ID:       "a1/web/" + id,
		Name:     "web",
		AllocID:  "a1-" + id,
		AllocDir: alloc,
		TaskDir: drivers.TaskDir{
			Dir:        taskDir,
			LocalDir:   filepath.Join(taskDir, "local"),
			SecretsDir: filepath.Join(taskDir, "secrets"),
			SharedDir:  shared,
			LogDir:     filepath.Join(shared, "logs"),
		},
		Env: map[string]string{
			"NOMAD_TASK_NAME": "web",
			"NOMAD_TASK_DIR":  filepath.Join(taskDir, "local"),
			"NOMAD_ALLOC_DIR": shared,
			"DATA":            filepath.Join(shared, "data"),
		},
		Resources:  &drivers.Resources{CPUShares: 100, MemoryMB: 64},
		StdoutPath: filepath.Join(shared, "logs", "web.stdout.0"),
		StderrPath: filepath.Join(shared, "logs", "web.stderr.0"),
		RawConfig:  raw,
	}
}

// sh returns a config running script with /bin/sh.
func (h *harness) sh(script string) *drivers.TaskConfig {
	return h.config("/bin/sh", "-c", script)
}

func (h *harness) start(cfg *drivers.TaskConfig) *drivers.TaskHandle {
	h.t.Helper()
	th, err := h.d.StartTask(context.Background(), cfg)
	if err != nil {
		h.t.Fatalf("StartTask: %v", err)
	}
	st := handleState(h.t, th)
	h.t.Cleanup(func() {
		err := h.d.DestroyTask(context.Background(), cfg.ID, true)
		if err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			h.t.Errorf("DestroyTask: %v", err)
		}
		testwait.Exit(h.t, "task gone", st.Isolation.Pid, func() bool { return isolation.Alive(st.Isolation.Pid, st.Isolation.StartTime) })
	})
	return th
}

// handleState decodes the driver state of a handle.
func handleState(t *testing.T, th *drivers.TaskHandle) *driverState {
	t.Helper()
	var st driverState
	if err := json.Unmarshal(th.DriverState, &st); err != nil {
		t.Fatalf("driver state: %v", err)
	}
	if st.Isolation.Pid <= 0 || st.Isolation.StartTime == 0 || st.Isolation.Cgroup == nil {
		t.Fatalf("incomplete driver state %s", th.DriverState)
	}
	return &st
}

// wait waits for the task's exit.
func (h *harness) wait(id string) *drivers.ExitResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := h.d.WaitTask(ctx, id)
	if err != nil {
		h.t.Fatalf("WaitTask: %v", err)
	}
	res, ok := <-ch
	if !ok {
		h.t.Fatal("WaitTask: no result before the deadline")
	}
	return res
}

// stdout returns what the task wrote to its stdout so far.
func stdout(t *testing.T, cfg *drivers.TaskConfig) string {
	t.Helper()
	b, err := os.ReadFile(cfg.StdoutPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// stderr returns what the task wrote to its stderr so far.
func stderr(t *testing.T, cfg *drivers.TaskConfig) string {
	t.Helper()
	b, _ := os.ReadFile(cfg.StderrPath)
	return string(b)
}
