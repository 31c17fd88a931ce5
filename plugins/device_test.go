package plugins_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
)

// TestLaunchDevicePlugin launches devices/fake as a plugin process: it
// fingerprints, reserves and reports stats across the process boundary,
// refuses to be launched as a driver, and its death reaches the agent's
// side: its streams end and its calls fail.
func TestLaunchDevicePlugin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fake_device")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/fakedeviceplugin").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var typeErr *plugins.PluginTypeError
	if inst, err := plugins.Launch(ctx, bin, nil, testLogger(t)); !errors.As(err, &typeErr) {
		if inst != nil {
			inst.Kill()
		}
		t.Fatalf("a device plugin launched as a driver: %v, want a PluginTypeError", err)
	}
	if typeErr.Type != base.PluginTypeDevice || typeErr.Name != "fake_device" || typeErr.Want != base.PluginTypeDriver {
		t.Errorf("type error = %+v", typeErr)
	}
	if inst, err := plugins.LaunchDevice(ctx, filepath.Join(pluginDir, "mock_driver"), nil, testLogger(t)); !errors.As(err, &typeErr) {
		if inst != nil {
			inst.Kill()
		}
		t.Fatalf("a driver launched as a device plugin: %v, want a PluginTypeError", err)
	}
	if typeErr.Type != base.PluginTypeDriver || typeErr.Want != base.PluginTypeDevice {
		t.Errorf("type error = %+v", typeErr)
	}

	inst, err := plugins.LaunchDevice(ctx, bin, nil, testLogger(t))
	if err != nil {
		t.Fatalf("LaunchDevice: %v", err)
	}
	t.Cleanup(inst.Kill)
	if inst.Info().Type != base.PluginTypeDevice || inst.Info().Name != "fake_device" {
		t.Fatalf("info = %+v", inst.Info())
	}
	// A second connection re-attaches to the same process (what a
	// restarted agent does); its Kill, at the end, closes it.
	again, err := plugins.ReattachDevice(ctx, inst.ReattachConfig(), testLogger(t))
	if err != nil {
		t.Fatalf("ReattachDevice: %v", err)
	}
	t.Cleanup(again.Kill)
	if again.Info().Name != "fake_device" || again.ReattachConfig().Pid != inst.ReattachConfig().Pid {
		t.Errorf("re-attached to %+v pid %d", again.Info(), again.ReattachConfig().Pid)
	}
	d := inst.Device()
	if err := d.SetConfig(ctx, &base.Config{PluginConfig: []byte(`{"vendor":"drover","type":"gpu","name":"fake","instances":["p0","p1"]}`)}); err != nil {
		t.Fatal(err)
	}
	fpCtx, fpCancel := context.WithCancel(ctx)
	defer fpCancel()
	ch, err := d.Fingerprint(fpCtx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if fp.Error != nil || len(fp.Devices) != 1 || len(fp.Devices[0].Devices) != 2 {
		t.Fatalf("fingerprint = %+v", fp)
	}
	r, err := d.Reserve(ctx, []string{"p1"})
	if err != nil || r.Envs["FAKE_VISIBLE_DEVICES"] != "p1" {
		t.Fatalf("Reserve = %+v, %v", r, err)
	}
	if _, err := d.Reserve(ctx, []string{"nope"}); !errors.Is(err, device.ErrUnknownDevice) {
		t.Fatalf("Reserve(nope) = %v", err)
	}
	inst.Kill()
	if got, ok := <-ch; ok && got.Error == nil {
		t.Fatalf("after the plugin died got %+v", got)
	}
	for range ch {
	}
	if _, err := d.Reserve(ctx, []string{"p1"}); err == nil {
		t.Fatal("Reserve succeeded on a killed plugin")
	}
}
