package drivermanager

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
)

// rawExecTask returns a raw_exec task config running sleep in a fresh
// alloc dir.
func rawExecTask(t *testing.T, id string) *drivers.TaskConfig {
	t.Helper()
	alloc := t.TempDir()
	td := drivers.TaskDir{
		Dir:      filepath.Join(alloc, "web"),
		LocalDir: filepath.Join(alloc, "web", "local"),
		LogDir:   filepath.Join(alloc, "alloc", "logs"),
	}
	for _, dir := range []string{td.LocalDir, td.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &drivers.TaskConfig{
		ID: id, Name: "web", AllocID: "a1", AllocDir: alloc, TaskDir: td,
		StdoutPath: filepath.Join(td.LogDir, "web.stdout.0"),
		StderrPath: filepath.Join(td.LogDir, "web.stderr.0"),
		RawConfig:  json.RawMessage(`{"command":"sleep","args":["1000"]}`),
	}
}

// fakeAfter is an injected clock whose timers fire at once and record the
// delays asked for.
type fakeAfter struct {
	mu     sync.Mutex // guards the field below
	delays []time.Duration
}

func (f *fakeAfter) after(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	f.delays = append(f.delays, d)
	f.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func (f *fakeAfter) asked() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.delays...)
}

func pluginPid(m *Manager, name string) int {
	m.mu.RLock()
	md := m.drivers[name]
	m.mu.RUnlock()
	return md.current().ext.ReattachConfig().Pid
}

// stopTask stops and destroys a task, so no shim outlives the test.
func stopTask(t *testing.T, d drivers.DriverPlugin, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.DestroyTask(ctx, id, true); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Errorf("DestroyTask: %v", err)
	}
}

func TestManager_ExternalPluginFromPluginDir(t *testing.T) {
	m, rec := startManager(t, Config{PluginDir: pluginDir(t, "mock_driver"), KillOnShutdown: true})
	info := rec.last("mock_driver")
	if info == nil || !info.Healthy || info.Attributes["driver.mock_driver"] != "1" {
		t.Fatalf("external mock driver info = %+v", info)
	}
	d, err := m.Dispense("mock_driver")
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := &drivers.TaskConfig{ID: "a1/web/1", Name: "web", AllocID: "a1", RawConfig: json.RawMessage(`{"run_for":"50ms","exit_code":7}`)}
	if _, err := d.StartTask(ctx, cfg); err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	ch, err := d.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res := <-ch; res == nil || res.ExitCode != 7 {
		t.Fatalf("exit = %+v, want code 7", res)
	}
}

func TestManager_ExternalPluginBadConfig(t *testing.T) {
	m := New(Config{
		PluginDir:     pluginDir(t, "mock_driver"),
		PluginConfigs: map[string]json.RawMessage{"mock_driver": json.RawMessage(`{"colour":"red"}`)},
	})
	defer m.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), `plugin "mock_driver": config field "colour"`) {
		t.Fatalf("Start = %v, want an error naming plugin and field", err)
	}
}

// TestManager_PluginCrashRestart: SIGKILL the raw_exec plugin; the driver
// turns unhealthy, the plugin is relaunched after the backoff, and the
// task it ran is recovered: the wait opened before the crash goes on and
// ends with the task's real exit once it is stopped.
func TestManager_PluginCrashRestart(t *testing.T) {
	clock := &fakeAfter{}
	m, rec := startManager(t, Config{
		PluginDir: pluginDir(t, "raw_exec"), KillOnShutdown: true,
		After: clock.after, RestartBase: 3 * time.Second, ExitPollInterval: 20 * time.Millisecond,
	})
	d, err := m.Dispense("raw_exec")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := rawExecTask(t, "a1/web/1")
	if _, err := d.StartTask(ctx, cfg); err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	defer stopTask(t, d, cfg.ID)
	waitCh, err := d.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}

	firstPid := pluginPid(m, "raw_exec")
	if err := syscall.Kill(firstPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rec.await(t, "the driver reported unhealthy", func() bool {
		for _, info := range rec.all("raw_exec") {
			if !info.Healthy && strings.HasPrefix(info.HealthDescription, "plugin exited: restarting in 3s") {
				return true
			}
		}
		return false
	})
	rec.await(t, "the driver healthy again", func() bool {
		info := rec.last("raw_exec")
		return info.Healthy && pluginPid(m, "raw_exec") != firstPid
	})
	if got := clock.asked(); len(got) != 1 || got[0] != 3*time.Second {
		t.Fatalf("backoff delays = %v, want [3s]", got)
	}

	st, err := d.InspectTask(ctx, cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("task after the restart = %+v, %v; want running", st, err)
	}
	select {
	case res := <-waitCh:
		t.Fatalf("the wait ended with the plugin's crash: %+v", res)
	default:
	}
	if err := d.StopTask(ctx, cfg.ID, 5*time.Second, "SIGTERM"); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	select {
	case res := <-waitCh:
		if res == nil || res.Signal != int(syscall.SIGTERM) {
			t.Fatalf("exit = %+v, want signal SIGTERM", res)
		}
	case <-ctx.Done():
		t.Fatal("no exit after StopTask")
	}
}

// TestManager_ReattachAfterAgentRestart: a new Manager with the same state
// re-attaches to the plugin process the first one left running, without
// launching another, and recovers the task there.
func TestManager_ReattachAfterAgentRestart(t *testing.T) {
	db := state.NewMemDB()
	dir := pluginDir(t, "raw_exec")
	first := New(Config{PluginDir: dir, State: db})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := pluginPid(first, "raw_exec")
	d1, err := first.Dispense("raw_exec")
	if err != nil {
		t.Fatal(err)
	}
	cfg := rawExecTask(t, "a1/web/1")
	h, err := d1.StartTask(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.Shutdown() // the agent stops; the plugin keeps running
	defer first.drivers["raw_exec"].current().ext.Kill()

	second, _ := startManager(t, Config{PluginDir: dir, State: db, KillOnShutdown: true})
	if got := pluginPid(second, "raw_exec"); got != pid {
		t.Fatalf("plugin pid after restart = %d, want the re-attached %d", got, pid)
	}
	d2, err := second.Dispense("raw_exec")
	if err != nil {
		t.Fatal(err)
	}
	defer stopTask(t, d2, cfg.ID)
	if err := d2.RecoverTask(ctx, h); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	st, err := d2.InspectTask(ctx, cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("task = %+v, %v; want running", st, err)
	}
}

// stepClock is an injected clock whose timers the test fires one by one.
type stepClock struct{ timers chan stepTimer }

type stepTimer struct {
	d    time.Duration
	fire chan time.Time
}

func (c *stepClock) after(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.timers <- stepTimer{d: d, fire: ch}
	return ch
}

func (c *stepClock) next(t *testing.T) stepTimer {
	t.Helper()
	select {
	case tm := <-c.timers:
		return tm
	case <-time.After(20 * time.Second):
		t.Fatal("no restart timer")
		return stepTimer{}
	}
}

// TestManager_RelaunchBackoff: while the plugin cannot be relaunched the
// delay doubles and the driver stays unhealthy, saying when it retries.
func TestManager_RelaunchBackoff(t *testing.T) {
	dir := pluginDir(t, "mock_driver")
	clock := &stepClock{timers: make(chan stepTimer, 4)}
	m, rec := startManager(t, Config{
		PluginDir: dir, KillOnShutdown: true, After: clock.after,
		RestartBase: time.Second, RestartMax: 3 * time.Second, ExitPollInterval: 20 * time.Millisecond,
	})
	first := pluginPid(m, "mock_driver")
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mock_driver")
	if err := os.Remove(path); err != nil { // the relaunch will fail
		t.Fatal(err)
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		tm := clock.next(t)
		if tm.d != want {
			t.Fatalf("restart delay %d = %s, want %s", i+1, tm.d, want)
		}
		info := rec.last("mock_driver")
		if info.Healthy || info.HealthDescription != "plugin exited: restarting in "+want.String() {
			t.Fatalf("driver info while restarting = %+v", info)
		}
		if i == 2 {
			if err := os.Symlink(pluginBinary, path); err != nil {
				t.Fatal(err)
			}
		}
		tm.fire <- time.Now()
	}
	rec.await(t, "the relaunched plugin healthy", func() bool {
		return rec.last("mock_driver").Healthy
	})
	if pluginPid(m, "mock_driver") == first {
		t.Fatal("the plugin was not relaunched")
	}
}

// TestManager_SkipsDevicePlugins: a device plugin binary in plugin_dir is
// neither a driver nor a broken one: no driver of its name, no launch
// error, and its config block draws no "driver this agent does not have"
// warning.
func TestManager_SkipsDevicePlugins(t *testing.T) {
	dir := pluginDir(t, "mock_driver")
	if err := os.Symlink(deviceBinary, filepath.Join(dir, "my-gpus")); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	m, rec := startManager(t, Config{
		Logger:         slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PluginDir:      dir,
		PluginConfigs:  map[string]json.RawMessage{"fake_device": json.RawMessage(`{"instances":["a"]}`)},
		KillOnShutdown: true,
	})
	if info := rec.last("mock_driver"); info == nil || !info.Healthy {
		t.Fatalf("mock_driver = %+v", info)
	}
	if _, ok := m.Drivers()["fake_device"]; ok || len(m.Drivers()) != 1 {
		t.Errorf("drivers = %v, want only mock_driver", m.Drivers())
	}
	out := logs.String()
	for _, bad := range []string{"could not launch", "does not have"} {
		if strings.Contains(out, bad) {
			t.Errorf("log has %q:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "not a driver plugin; skipping it") {
		t.Errorf("the skip is not logged:\n%s", out)
	}
}

// lockedBuffer is a log sink safe for the manager's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestManager_ExternalPluginSwitchedOff: an external plugin whose driver is
// outside the allowlist (driver.allowlist) or disabled (driver.denylist) is
// killed and not used: no fingerprint reaches the node, and it cannot be
// dispensed.
func TestManager_ExternalPluginSwitchedOff(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"outside the allowlist", Config{Allowlist: []string{"raw_exec"}}},
		{"disabled", Config{Disabled: map[string]string{"mock_driver": "the client option driver.denylist names it"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.PluginDir, cfg.KillOnShutdown = pluginDir(t, "mock_driver"), true
			m, rec := startManager(t, cfg)
			if info := rec.last("mock_driver"); info != nil {
				t.Errorf("the switched-off plugin reported %+v", info)
			}
			if _, ok := m.Drivers()["mock_driver"]; ok {
				t.Error("the switched-off plugin is among the drivers")
			}
			if _, err := m.Dispense("mock_driver"); err == nil {
				t.Error("the switched-off plugin was dispensed")
			}
		})
	}
}
