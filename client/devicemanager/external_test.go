package devicemanager

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/structs"
)

// extPluginDir returns a plugin_dir with the device plugin binary and the
// driver plugin binary (as mock_driver).
func extPluginDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, bin := range map[string]string{"my-gpus": devicePluginBinary, "mock_driver": driverPluginBinary} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// extConfig configures the external fake_device with two instances.
func extConfig(dir string, db StateStore, rec *nodeRecorder, logs *syncBuf) Config {
	return Config{
		Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PluginDir:     dir,
		PluginConfigs: map[string]json.RawMessage{"fake_device": json.RawMessage(`{"name":"ext","instances":["x0","x1"]}`)},
		State:         db,
		UpdateNode:    rec.update,
		RestartBase:   restartBase,
		RestartMax:    restartBase,
	}
}

// pluginPid returns the persisted pid of the external fake_device; 0: none.
func pluginPid(t *testing.T, db StateStore) int {
	t.Helper()
	states, err := db.GetDevicePluginStates()
	if err != nil {
		t.Fatal(err)
	}
	var st pluginState
	if raw, ok := states["fake_device"]; !ok || json.Unmarshal(raw, &st) != nil || st.Reattach == nil {
		return 0
	}
	return st.Reattach.Pid
}

// TestExternalDevicePlugin: of a plugin_dir with a device plugin and a
// driver plugin, the device manager runs the device plugin (configured by
// its block, its re-attach config persisted), skips the driver without an
// error, restarts the device plugin when its process dies, and kills it
// and forgets its state on Shutdown.
func TestExternalDevicePlugin(t *testing.T) {
	db := state.NewMemDB()
	rec, logs := &nodeRecorder{}, &syncBuf{}
	m := New(extConfig(extPluginDir(t), db, rec, logs))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer m.Shutdown()
	const healthy = "drover/gpu/ext#x0:healthy,drover/gpu/ext#x1:healthy"
	if got := rec.summary(); got != healthy {
		t.Fatalf("devices = %q, want %q", got, healthy)
	}
	if out := logs.String(); strings.Contains(out, "could not launch") || !strings.Contains(out, "not a device plugin; skipping it") {
		t.Errorf("the driver binary was not skipped quietly:\n%s", out)
	}
	r, err := m.Reserve(ctx, &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "ext", DeviceIDs: []string{"x1"}})
	if err != nil || r.Envs["FAKE_VISIBLE_DEVICES"] != "x1" {
		t.Fatalf("Reserve = %+v, %v", r, err)
	}
	pid := pluginPid(t, db)
	if pid == 0 {
		t.Fatal("no re-attach config persisted")
	}

	// A crash: the devices turn unhealthy, the plugin is relaunched (a
	// new pid persisted) and they are healthy again.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The relaunched process's re-attach config is persisted before its
	// first fingerprint reaches the node.
	rec.wait(t, "the relaunched plugin", func() bool {
		p := pluginPid(t, db)
		return p != 0 && p != pid && rec.summary() == healthy
	})
	newPid := pluginPid(t, db)

	m.Shutdown()
	if p := pluginPid(t, db); p != 0 {
		t.Errorf("state of pid %d kept after Shutdown", p)
	}
	// A real process: nothing of the manager's tells when it is gone, so
	// this polls (the bound is for a hung test only).
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(newPid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("plugin process %d still there a minute after Shutdown", newPid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExternalDevicePluginReattach: a manager started with the state of
// another one whose plugin still runs (an agent that crashed) re-attaches
// to that process instead of launching a second one.
func TestExternalDevicePluginReattach(t *testing.T) {
	db := state.NewMemDB()
	dir := extPluginDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := New(extConfig(dir, db, &nodeRecorder{}, &syncBuf{}))
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer first.Shutdown()
	pid := pluginPid(t, db)

	rec, logs := &nodeRecorder{}, &syncBuf{}
	second := New(extConfig(dir, db, rec, logs))
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown()
	if !strings.Contains(logs.String(), "re-attached to device plugin") || pluginPid(t, db) != pid {
		t.Fatalf("second manager did not re-attach to pid %d (state pid %d):\n%s", pid, pluginPid(t, db), logs.String())
	}
	if got := rec.summary(); got != "drover/gpu/ext#x0:healthy,drover/gpu/ext#x1:healthy" {
		t.Errorf("devices through the re-attached plugin = %q", got)
	}
}

// TestExternalDevicePluginBadConfig: an invalid block of an external
// device plugin fails Start naming the plugin and the field, and leaves
// no process and no state behind.
func TestExternalDevicePluginBadConfig(t *testing.T) {
	db := state.NewMemDB()
	cfg := extConfig(extPluginDir(t), db, &nodeRecorder{}, &syncBuf{})
	cfg.PluginConfigs = map[string]json.RawMessage{"fake_device": json.RawMessage(`{"instancez":["a"]}`)}
	m := New(cfg)
	defer m.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := m.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), `plugin "fake_device": config field "instancez"`) {
		t.Fatalf("Start = %v, want the bad field named", err)
	}
	if p := pluginPid(t, db); p != 0 {
		t.Errorf("state of pid %d left behind", p)
	}
}
