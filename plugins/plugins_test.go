package plugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

// pluginDir holds the test plugin binaries TestMain builds, as an agent's
// plugin_dir would.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drover-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	for name, pkg := range map[string]string{"mock_driver": "./testdata/mockplugin", "raw_exec": "./testdata/rawexecplugin"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build the test plugin %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func launch(t *testing.T) *plugins.Instance {
	t.Helper()
	return launchPlugin(t, "mock_driver")
}

// launchPlugin launches the plugin binary name from the plugin dir and
// kills it when the test ends.
func launchPlugin(t *testing.T, name string) *plugins.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := plugins.Launch(ctx, filepath.Join(pluginDir, name), nil, testLogger(t))
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(inst.Kill)
	return inst
}

func testLogger(*testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

var mockSpec = &conformance.Spec{
	RunForever:      json.RawMessage(`{"run_for":"1h"}`),
	ExitZero:        json.RawMessage(`{"run_for":"10ms"}`),
	ExitThree:       json.RawMessage(`{"run_for":"10ms","exit_code":3}`),
	ExecCommand:     []string{"true"},
	ExecEchoCommand: []string{"cat"},
}

// TestConformance_ExternalPlugin runs the conformance checks against the
// mock driver served by a plugin binary loaded from the plugin dir.
func TestConformance_ExternalPlugin(t *testing.T) {
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		return launch(t).Driver()
	}, mockSpec)
}

func TestLaunch_Info(t *testing.T) {
	inst := launch(t)
	info := inst.Info()
	if info.Type != base.PluginTypeDriver || info.Name != "mock_driver" || len(info.PluginAPIVersions) == 0 {
		t.Fatalf("Info = %+v", info)
	}
	if inst.Driver().Name() != "mock_driver" {
		t.Fatalf("Name = %q", inst.Driver().Name())
	}
	rc := inst.ReattachConfig()
	if rc.Pid <= 0 || rc.Address == "" || rc.Network == "" || rc.Protocol != "grpc" {
		t.Fatalf("ReattachConfig = %+v", rc)
	}
	if inst.Exited() {
		t.Fatal("Exited before Kill")
	}
	inst.Kill()
	if !inst.Exited() {
		t.Fatal("not Exited after Kill")
	}
}

func TestLaunch_Errors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	notPlugin := filepath.Join(t.TempDir(), "true")
	if err := os.WriteFile(notPlugin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
	}{
		{"missing binary", filepath.Join(t.TempDir(), "nope")},
		{"not a plugin", notPlugin},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := plugins.Launch(ctx, tc.path, nil, nil)
			if err == nil {
				inst.Kill()
				t.Fatal("Launch succeeded")
			}
		})
	}
}

// TestServe_ByHand: a plugin binary run without the agent's handshake
// explains itself and exits 1.
func TestServe_ByHand(t *testing.T) {
	cmd := exec.Command(filepath.Join(pluginDir, "mock_driver"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("run by hand: err = %v, want exit 1; output:\n%s", err, out)
	}
}

func startForever(t *testing.T, d drivers.DriverPlugin, id string) *drivers.TaskHandle {
	t.Helper()
	h, err := d.StartTask(context.Background(), &drivers.TaskConfig{ID: id, Name: "web", AllocID: "a", RawConfig: json.RawMessage(`{"run_for":"1h"}`)})
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	return h
}

// TestPluginCrash: a plugin killed with SIGKILL makes calls fail at once
// with ErrPluginUnavailable instead of hanging.
func TestPluginCrash(t *testing.T) {
	inst := launch(t)
	d := inst.Driver()
	ctx := context.Background()
	startForever(t, d, "a/web/1")
	waitCh, err := d.WaitTask(ctx, "a/web/1")
	if err != nil {
		t.Fatal(err)
	}
	fpCtx, fpCancel := context.WithCancel(ctx)
	defer fpCancel()
	fps, err := d.Fingerprint(fpCtx)
	if err != nil {
		t.Fatal(err)
	}
	<-fps

	if err := syscall.Kill(inst.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case res, ok := <-waitCh:
		if !ok || res == nil || !errors.Is(res.Err, drivers.ErrPluginUnavailable) {
			t.Fatalf("wait after crash = %+v, %v; want Err wrapping ErrPluginUnavailable", res, ok)
		}
	case <-deadline.C:
		t.Fatal("WaitTask hangs after the plugin crashed")
	}
	select {
	case fp, ok := <-fps:
		if !ok || fp.Health != drivers.HealthStateUnhealthy {
			t.Fatalf("fingerprint after crash = %+v, %v; want unhealthy", fp, ok)
		}
	case <-deadline.C:
		t.Fatal("Fingerprint hangs after the plugin crashed")
	}
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	calls := map[string]func() error{
		"InspectTask": func() error { _, err := d.InspectTask(callCtx, "a/web/1"); return err },
		"StopTask":    func() error { return d.StopTask(callCtx, "a/web/1", time.Second, "") },
		"StartTask": func() error {
			_, err := d.StartTask(callCtx, &drivers.TaskConfig{ID: "a/web/2", RawConfig: json.RawMessage(`{}`)})
			return err
		},
		"WaitTask": func() error { _, err := d.WaitTask(callCtx, "a/web/1"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, drivers.ErrPluginUnavailable) {
			t.Errorf("%s after crash: err = %v, want ErrPluginUnavailable", name, err)
		}
	}
	eventually(t, "Exited after SIGKILL", inst.Exited)

	if inst2, err := plugins.Reattach(callCtx, inst.ReattachConfig(), nil); err == nil {
		inst2.Kill()
		t.Fatal("Reattach to a dead plugin succeeded")
	}
}

// TestReattach: a fresh client (a restarted agent) reattaches from the
// persisted JSON config to the running plugin and finds its tasks.
func TestReattach(t *testing.T) {
	first := launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := startForever(t, first.Driver(), "a/web/1")

	persisted, err := json.Marshal(first.ReattachConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rc plugins.ReattachConfig
	if err := json.Unmarshal(persisted, &rc); err != nil {
		t.Fatal(err)
	}
	second, err := plugins.Reattach(ctx, &rc, nil)
	if err != nil {
		t.Fatalf("Reattach: %v", err)
	}
	t.Cleanup(second.Kill)
	d := second.Driver()
	if err := d.RecoverTask(ctx, h); err != nil {
		t.Fatalf("RecoverTask through the reattached client: %v", err)
	}
	st, err := d.InspectTask(ctx, "a/web/1")
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("InspectTask = %+v, %v; want running", st, err)
	}
	waitCh, err := d.WaitTask(ctx, "a/web/1")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.StopTask(ctx, "a/web/1", time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	if res := <-waitCh; res == nil || res.Signal != int(syscall.SIGTERM) {
		t.Fatalf("exit after stop = %+v, want signal SIGTERM", res)
	}
	if second.ReattachConfig().Pid != first.ReattachConfig().Pid {
		t.Fatalf("reattached to pid %d, launched %d", second.ReattachConfig().Pid, first.ReattachConfig().Pid)
	}

	second.Kill()
	eventually(t, "launching client sees the plugin exit", first.Exited)
}

func TestReattach_Invalid(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		rc   *plugins.ReattachConfig
	}{
		{"nil", nil},
		{"no pid", &plugins.ReattachConfig{Network: "unix", Address: "/tmp/x"}},
		{"bad network", &plugins.ReattachConfig{Network: "udp", Address: "x", Pid: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := plugins.Reattach(ctx, tc.rc, nil); err == nil {
				t.Fatal("Reattach succeeded")
			}
		})
	}
}

// eventually polls cond until it holds or a minute passes. It is only for
// Instance.Exited: go-plugin notes a plugin's exit in a flag, with no
// event to wait on, just after it reaps the process. The minute is a bound
// for a hung test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// lockedBuffer is a concurrency-safe log sink that signals its writes.
type lockedBuffer struct {
	mu    sync.Mutex // guards the field below
	buf   bytes.Buffer
	wrote chan struct{} // signalled, without blocking, after each write
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{wrote: make(chan struct{}, 1)} }

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

// await waits until the buffer holds s, waking on each write.
func (b *lockedBuffer) await(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(time.Minute) // a bound for a hung test
	for !strings.Contains(b.String(), s) {
		select {
		case <-b.wrote:
		case <-timeout:
			t.Fatalf("log lacks %q:\n%s", s, b.String())
		}
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLaunch_PluginLogs: the plugin's stderr logs reach the agent's logger
// with their level and attributes, tagged with the plugin.
func TestLaunch_PluginLogs(t *testing.T) {
	out := newLockedBuffer()
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := plugins.Launch(ctx, filepath.Join(pluginDir, "mock_driver"), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inst.Kill)
	want := fmt.Sprintf(`level=INFO msg="mock driver plugin starting" plugin=mock_driver pid=%d`, inst.ReattachConfig().Pid)
	out.await(t, want)
}
