package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/devices/fake"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// recordingDriver is the mock driver that remembers the TaskConfigs it
// started.
type recordingDriver struct {
	*mock.Driver
	mu      sync.Mutex
	configs []*drivers.TaskConfig
}

func (d *recordingDriver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.configs = append(d.configs, cfg)
	d.mu.Unlock()
	return d.Driver.StartTask(ctx, cfg)
}

func (d *recordingDriver) lastEnv(key string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.configs) == 0 {
		return ""
	}
	return d.configs[len(d.configs)-1].Env[key]
}

func TestClientDevices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		md := mock.New(nil)
		t.Cleanup(md.Shutdown)
		rd := &recordingDriver{Driver: md}
		c, err := New(&Config{
			RPC:      srv,
			Drivers:  map[string]drivers.DriverPlugin{mock.Name: rd},
			StateDB:  state.NewMemDB(),
			AllocDir: t.TempDir(),
			DeviceManager: &devicemanager.Config{
				Catalog: map[string]devicemanager.Factory{fake.PluginName: func(l *slog.Logger) (device.DevicePlugin, error) {
					return fake.New(l), nil
				}},
				PluginConfigs: map[string]json.RawMessage{fake.PluginName: json.RawMessage(`{"instances":["g0","g1"],"attributes":{"memory":"4 GiB"}}`)},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Shutdown() })
		c.updateInterval = 5 * time.Millisecond
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		srv.wait(t, "registration with devices", func() bool {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			n := srv.nodes[c.NodeID()]
			return n != nil && n.NodeResources != nil && len(n.NodeResources.Devices) == 1 && len(n.NodeResources.Devices[0].Instances) == 2
		})
		alloc := testJobAlloc(c.NodeID(), map[string]any{})
		alloc.AllocatedResources = &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"web": {Devices: []*structs.AllocatedDeviceResource{{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"g1"}}}}}}
		srv.putAlloc(alloc)
		srv.wait(t, "alloc running", func() bool { return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning })
		if got := rd.lastEnv("FAKE_VISIBLE_DEVICES"); got != "g1" {
			t.Fatalf("FAKE_VISIBLE_DEVICES = %q, want g1", got)
		}
		time.Sleep(devicemanager.DefaultStatsInterval) // the fake plugin's first sample
		settle(t, "device stats", func() bool { return len(c.TaskDeviceStats(alloc)["web"]) == 1 })
		st := c.TaskDeviceStats(alloc)["web"][0]
		if len(st.InstanceStats) != 1 || st.InstanceStats["g1"] == nil {
			t.Fatalf("task device stats = %+v", st.InstanceStats)
		}
		if hs := c.HostDeviceStats(); len(hs) != 1 || len(hs[0].InstanceStats) != 2 {
			t.Fatalf("host device stats = %+v", hs)
		}
	})
}
