package grpcdevice_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/devicetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestBaseCalls(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	var got *base.Config
	p.SetConfigFn = func(_ context.Context, cfg *base.Config) error { got = cfg; return nil }
	c, _ := devicetest.Serve(t, p)
	info, err := c.PluginInfo(ctx(t))
	if err != nil || info.Type != base.PluginTypeDevice || info.Name != "mock_device" {
		t.Fatalf("PluginInfo = %+v, %v", info, err)
	}
	minPort := 0
	if err := c.SetConfig(ctx(t), &base.Config{PluginConfig: []byte(`{}`), AgentConfig: &base.AgentConfig{NodeID: "n1", ClientMinPort: &minPort}}); err != nil {
		t.Fatal(err)
	}
	if string(got.PluginConfig) != "{}" || got.AgentConfig.NodeID != "n1" || got.AgentConfig.ClientMinPort == nil || *got.AgentConfig.ClientMinPort != 0 || got.AgentConfig.ClientMaxPort != nil {
		t.Fatalf("config crossed as %+v / %+v", got, got.AgentConfig)
	}
}

func TestFingerprintRoundTrip(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	c, _ := devicetest.Serve(t, p)
	ch, err := c.Fingerprint(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := &device.FingerprintResponse{Devices: []*device.DeviceGroup{{
		Vendor: "drover", Type: "gpu", Name: "fake",
		Devices: []*device.Device{
			{ID: "a", Healthy: true, HwLocality: &device.DeviceLocality{PciBusID: "0000:01:00.0"}},
			{ID: "b", Healthy: false, HealthDesc: "too hot"},
		},
		Attributes: map[string]*device.Attribute{
			"memory": device.NewIntAttribute(16, "GiB"),
			"zero":   device.NewIntAttribute(0, ""),
			"off":    device.NewBoolAttribute(false),
			"clock":  device.NewFloatAttribute(1.5, "GHz"),
			"model":  device.NewStringAttribute(""),
		},
	}}}
	p.FingerprintCh <- want
	got := <-ch
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fingerprint crossed as %#v, want %#v", got.Devices[0], want.Devices[0])
	}
	p.FingerprintCh <- &device.FingerprintResponse{Error: errors.New("nvml gone")}
	if got := <-ch; got.Error == nil || got.Error.Error() != "nvml gone" || got.Devices != nil {
		t.Fatalf("error fingerprint crossed as %+v", got)
	}
}

func TestReserve(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	p.ReserveFn = func(_ context.Context, ids []string) (*device.ContainerReservation, error) {
		if ids[0] == "ghost" {
			return nil, fmt.Errorf("reserve %q: %w", ids[0], device.ErrUnknownDevice)
		}
		return &device.ContainerReservation{
			Envs:    map[string]string{"FAKE_VISIBLE_DEVICES": ids[0]},
			Mounts:  []*device.Mount{{TaskPath: "/t", HostPath: "/h", ReadOnly: true}},
			Devices: []*device.DeviceSpec{{TaskPath: "/dev/x", HostPath: "/dev/y", CgroupPerms: "rw"}},
		}, nil
	}
	c, _ := devicetest.Serve(t, p)
	r, err := c.Reserve(ctx(t), []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Envs["FAKE_VISIBLE_DEVICES"] != "a" || !r.Mounts[0].ReadOnly || r.Devices[0].HostPath != "/dev/y" {
		t.Fatalf("reservation crossed as %+v", r)
	}
	_, err = c.Reserve(ctx(t), []string{"ghost"})
	if !errors.Is(err, device.ErrUnknownDevice) {
		t.Fatalf("Reserve(ghost) = %v, want ErrUnknownDevice", err)
	}
}

func TestStatsRoundTrip(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	c, _ := devicetest.Serve(t, p)
	ch, err := c.Stats(ctx(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	util, mem, total := 40.0, int64(1024), int64(4096)
	ts := time.Unix(1700000000, 5).UTC()
	want := &device.StatsResponse{Groups: []*device.DeviceGroupStats{{
		Vendor: "drover", Type: "gpu", Name: "fake",
		InstanceStats: map[string]*device.DeviceStats{"a": {
			Summary: &device.StatValue{FloatNumeratorVal: &util, Unit: "%", Desc: "utilisation"},
			Stats: &device.StatObject{
				Attributes: map[string]*device.StatValue{"memory": {IntNumeratorVal: &mem, IntDenominatorVal: &total, Unit: "MiB"}},
				Nested:     map[string]*device.StatObject{"ecc": {Attributes: map[string]*device.StatValue{"errors": {IntNumeratorVal: new(int64(0))}}}},
			},
			Timestamp: ts,
		}},
	}}}
	p.StatsCh <- want
	got := <-ch
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stats crossed as %#v", got.Groups[0].InstanceStats["a"])
	}
}

func TestPluginDeathEndsStreams(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	c, stop := devicetest.Serve(t, p)
	ch, err := c.Fingerprint(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	got, ok := <-ch
	if !ok || got.Error == nil {
		t.Fatalf("after plugin death got %+v, %v; want an error fingerprint", got, ok)
	}
	if _, ok := <-ch; ok {
		t.Fatal("stream did not close")
	}
	if _, err := c.Reserve(ctx(t), []string{"a"}); !errors.Is(err, device.ErrPluginUnavailable) {
		t.Fatalf("Reserve after death = %v, want ErrPluginUnavailable", err)
	}
}

func TestFingerprintRefused(t *testing.T) {
	p := devicetest.NewPlugin("mock_device")
	p.FingerprintErr = errors.New("not configured")
	c, _ := devicetest.Serve(t, p)
	if _, err := c.Fingerprint(ctx(t)); err == nil || err.Error() != "not configured" {
		t.Fatalf("Fingerprint = %v, want the plugin's refusal", err)
	}
}
