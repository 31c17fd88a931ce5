package nvidia

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/devicetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeLib is a gpuLib with scripted GPUs.
type fakeLib struct {
	initErr error
	gpus    []*gpu
	mu      sync.Mutex
	shut    bool
}

func (f *fakeLib) Init() error { return f.initErr }
func (f *fakeLib) Shutdown() error {
	f.mu.Lock()
	f.shut = true
	f.mu.Unlock()
	return nil
}
func (f *fakeLib) GPUs() ([]*gpu, error) { return f.gpus, nil }
func (f *fakeLib) Stats(uuid string) (*gpuStats, error) {
	u, used, total, temp, power := uint32(40), int64(100), int64(15360), uint32(55), uint32(70500)
	return &gpuStats{UtilisationPct: &u, MemoryUsedMiB: &used, MemoryTotalMiB: &total, TemperatureC: &temp, PowerMilliW: &power}, nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNoGPU runs the plugin on this machine's real NVML loader. Where there
// is no NVIDIA driver (CI, developer laptops) it must report no devices and
// say so once in the log; where there is one, its GPUs must validate.
func TestNoGPU(t *testing.T) {
	var logs syncBuf
	p := New(slog.New(slog.NewTextHandler(&logs, nil)))
	defer p.Shutdown()
	if err := p.SetConfig(testCtx(t), &base.Config{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch, err := p.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if fp.Error != nil {
		t.Fatalf("fingerprint error: %v", fp.Error)
	}
	if err := device.ValidateFingerprint(fp.Devices); err != nil {
		t.Fatalf("invalid fingerprint: %v", err)
	}
	if p.init() == nil {
		t.Logf("NVML present: %d GPU groups", len(fp.Devices))
		return
	}
	if len(fp.Devices) != 0 {
		t.Fatalf("without NVML got devices %+v", fp.Devices)
	}
	if !strings.Contains(logs.String(), "NVML is not available") {
		t.Fatalf("no clear log line; logs: %s", logs.String())
	}
	if _, err := p.Reserve(ctx, []string{"GPU-x"}); !errors.Is(err, device.ErrUnknownDevice) {
		t.Fatalf("Reserve without GPUs = %v", err)
	}
	sch, _ := p.Stats(ctx, time.Hour)
	if st := <-sch; len(st.Groups) != 0 || st.Error != nil {
		t.Fatalf("stats without GPUs = %+v", st)
	}
}

func TestFingerprintReserveStats(t *testing.T) {
	lib := &fakeLib{gpus: []*gpu{
		{UUID: "GPU-a", Model: "Tesla T4", PCIBusID: "00000000:3B:00.0", MemoryMiB: 15360},
		{UUID: "GPU-b", Model: "Tesla T4", MemoryMiB: 15360},
		{UUID: "GPU-c", Model: "A100", MemoryMiB: 40960},
	}}
	p := newPlugin(nil, lib)
	c, _ := devicetest.Serve(t, p)
	if err := c.SetConfig(testCtx(t), &base.Config{PluginConfig: []byte(`{"ignored_gpu_ids":["GPU-c"]}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch, err := c.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if err := device.ValidateFingerprint(fp.Devices); err != nil {
		t.Fatal(err)
	}
	if len(fp.Devices) != 1 || fp.Devices[0].Name != "Tesla T4" || len(fp.Devices[0].Devices) != 2 {
		t.Fatalf("groups = %+v", fp.Devices)
	}
	g := fp.Devices[0]
	if m := g.Attributes["memory"]; *m.Int != 15360 || m.Unit != "MiB" {
		t.Fatalf("memory = %#v", m)
	}
	if g.Devices[0].HwLocality == nil || g.Devices[0].HwLocality.PciBusID != "00000000:3B:00.0" || g.Devices[1].HwLocality != nil {
		t.Fatalf("locality = %+v / %+v", g.Devices[0].HwLocality, g.Devices[1].HwLocality)
	}
	r, err := c.Reserve(ctx, []string{"GPU-a", "GPU-b"})
	if err != nil || r.Envs["NVIDIA_VISIBLE_DEVICES"] != "GPU-a,GPU-b" {
		t.Fatalf("Reserve = %+v, %v", r, err)
	}
	if _, err := c.Reserve(ctx, []string{"GPU-c"}); !errors.Is(err, device.ErrUnknownDevice) {
		t.Fatalf("Reserve(ignored) = %v", err)
	}
	sch, err := c.Stats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	st := <-sch
	s := st.Groups[0].InstanceStats["GPU-a"]
	if s.Summary.String() != "40.00 %" || s.Stats.Attributes["power"].String() != "70.50 W" || s.Stats.Attributes["memory"].String() != "100 / 15360 MiB" {
		t.Fatalf("stats = %s, %s, %s", s.Summary, s.Stats.Attributes["power"], s.Stats.Attributes["memory"])
	}
	cancel()
	p.Shutdown()
	if !lib.shut {
		t.Fatal("NVML not shut down")
	}
}

func TestBadPeriod(t *testing.T) {
	p := newPlugin(nil, &fakeLib{})
	err := p.SetConfig(testCtx(t), &base.Config{PluginConfig: []byte(`{"fingerprint_period":"-1s"}`)})
	var ce *base.ConfigError
	if !errors.As(err, &ce) || ce.Field != "fingerprint_period" {
		t.Fatalf("SetConfig = %v", err)
	}
}
