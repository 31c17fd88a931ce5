package nvidia

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
)

// PluginName is the plugin's name in the agent's catalog and config.
const PluginName = "nvidia"

const (
	pluginVersion            = "0.1.0"
	defaultFingerprintPeriod = time.Minute
	defaultStatsInterval     = time.Second
	vendor                   = "nvidia"
	deviceType               = "gpu"
)

// Config is the plugin's config block.
type Config struct {
	// IgnoredGPUIDs are GPU UUIDs not to report.
	IgnoredGPUIDs []string `json:"ignored_gpu_ids"`
	// FingerprintPeriod is how often the GPUs are listed again ("1m").
	FingerprintPeriod string `json:"fingerprint_period"`
}

func schema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "ignored_gpu_ids", Type: base.TypeStringList, Description: "UUIDs of GPUs not to report"},
		{Name: "fingerprint_period", Type: base.TypeDuration, Default: json.RawMessage(`"1m"`), Description: "how often the GPUs are listed again"},
	}}
}

// Plugin is the NVIDIA GPU device plugin.
type Plugin struct {
	logger *slog.Logger
	lib    gpuLib
	now    func() time.Time
	after  func(time.Duration) <-chan time.Time

	mu      sync.Mutex // guards the fields below
	ignored []string
	period  time.Duration
	inited  bool
	initErr error
	gpus    map[string]*gpu // by UUID, from the last fingerprint
}

var _ device.DevicePlugin = (*Plugin)(nil)

// New returns the plugin using the machine's NVML.
func New(logger *slog.Logger) *Plugin { return newPlugin(logger, newRealLib()) }

func newPlugin(logger *slog.Logger, lib gpuLib) *Plugin {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Plugin{logger: logger, lib: lib, now: time.Now, after: time.After,
		period: defaultFingerprintPeriod}
}

// PluginInfo describes the plugin.
func (p *Plugin) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{Type: base.PluginTypeDevice, PluginAPIVersions: []string{device.APIVersion},
		PluginVersion: pluginVersion, Name: PluginName}, nil
}

// ConfigSchema describes the config block.
func (p *Plugin) ConfigSchema(context.Context) (*base.Schema, error) { return schema(), nil }

// SetConfig applies the config block.
func (p *Plugin) SetConfig(_ context.Context, cfg *base.Config) error {
	var c Config
	if err := cfg.DecodePluginConfig(&c); err != nil {
		return err
	}
	period := defaultFingerprintPeriod
	if c.FingerprintPeriod != "" {
		d, err := time.ParseDuration(c.FingerprintPeriod)
		if err != nil || d <= 0 {
			return &base.ConfigError{Plugin: PluginName, Field: "fingerprint_period", Err: fmt.Errorf("want a positive duration, got %q", c.FingerprintPeriod)}
		}
		period = d
	}
	p.mu.Lock()
	p.ignored, p.period = c.IgnoredGPUIDs, period
	p.mu.Unlock()
	return nil
}

// init initialises NVML once; its absence is logged once and remembered.
func (p *Plugin) init() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inited {
		p.inited = true
		p.initErr = p.lib.Init()
		switch {
		case errors.Is(p.initErr, errNoNVML):
			p.logger.Info("NVML is not available on this machine; reporting no NVIDIA GPUs", "reason", p.initErr)
		case p.initErr != nil:
			p.logger.Warn("NVML failed to initialise; reporting no NVIDIA GPUs", "error", p.initErr)
		}
	}
	return p.initErr
}

// Fingerprint sends the GPUs at once, then again every fingerprint_period
// when they changed. Without NVML it sends one empty fingerprint.
func (p *Plugin) Fingerprint(ctx context.Context) (<-chan *device.FingerprintResponse, error) {
	ch := make(chan *device.FingerprintResponse)
	go func() {
		defer close(ch)
		var last *device.FingerprintResponse
		for {
			fp := p.fingerprint()
			if last == nil || !sameFingerprint(last, fp) {
				select {
				case ch <- fp:
				case <-ctx.Done():
					return
				}
				last = fp
			}
			p.mu.Lock()
			period := p.period
			p.mu.Unlock()
			if p.init() != nil {
				<-ctx.Done()
				return
			}
			select {
			case <-p.after(period):
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// fingerprint lists the GPUs, grouped by model.
func (p *Plugin) fingerprint() *device.FingerprintResponse {
	if err := p.init(); err != nil {
		return &device.FingerprintResponse{}
	}
	gpus, err := p.lib.GPUs()
	if err != nil && len(gpus) == 0 {
		return &device.FingerprintResponse{Error: err}
	}
	if err != nil {
		p.logger.Warn("some GPUs could not be read", "error", err)
	}
	p.mu.Lock()
	ignored := p.ignored
	p.gpus = make(map[string]*gpu, len(gpus))
	byModel := map[string]*device.DeviceGroup{}
	for _, g := range gpus {
		if slices.Contains(ignored, g.UUID) {
			continue
		}
		p.gpus[g.UUID] = g
		grp := byModel[g.Model]
		if grp == nil {
			grp = &device.DeviceGroup{Vendor: vendor, Type: deviceType, Name: g.Model,
				Attributes: map[string]*device.Attribute{"memory": device.NewIntAttribute(g.MemoryMiB, "MiB")}}
			byModel[g.Model] = grp
		}
		d := &device.Device{ID: g.UUID, Healthy: true}
		if g.PCIBusID != "" {
			d.HwLocality = &device.DeviceLocality{PciBusID: g.PCIBusID}
		}
		grp.Devices = append(grp.Devices, d)
	}
	p.mu.Unlock()
	out := &device.FingerprintResponse{}
	for _, g := range byModel {
		out.Devices = append(out.Devices, g)
	}
	sort.Slice(out.Devices, func(i, j int) bool { return out.Devices[i].Name < out.Devices[j].Name })
	return out
}

func sameFingerprint(a, b *device.FingerprintResponse) bool {
	if (a.Error == nil) != (b.Error == nil) || len(a.Devices) != len(b.Devices) {
		return false
	}
	for i := range a.Devices {
		if a.Devices[i].Name != b.Devices[i].Name || len(a.Devices[i].Devices) != len(b.Devices[i].Devices) {
			return false
		}
		for j := range a.Devices[i].Devices {
			x, y := a.Devices[i].Devices[j], b.Devices[i].Devices[j]
			if x.ID != y.ID || x.Healthy != y.Healthy || x.HealthDesc != y.HealthDesc {
				return false
			}
		}
	}
	return true
}

// Reserve hands the task NVIDIA_VISIBLE_DEVICES with the GPUs' UUIDs.
func (p *Plugin) Reserve(_ context.Context, ids []string) (*device.ContainerReservation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if _, ok := p.gpus[id]; !ok {
			return nil, fmt.Errorf("reserve %q: %w", id, device.ErrUnknownDevice)
		}
	}
	return &device.ContainerReservation{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(ids, ",")}}, nil
}

// Stats sends every GPU's statistics at once and then every interval.
func (p *Plugin) Stats(ctx context.Context, interval time.Duration) (<-chan *device.StatsResponse, error) {
	if interval <= 0 {
		interval = defaultStatsInterval
	}
	ch := make(chan *device.StatsResponse)
	go func() {
		defer close(ch)
		for {
			select {
			case ch <- p.stats():
			case <-ctx.Done():
				return
			}
			select {
			case <-p.after(interval):
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

func (p *Plugin) stats() *device.StatsResponse {
	if p.init() != nil {
		return &device.StatsResponse{}
	}
	p.mu.Lock()
	gpus := make([]*gpu, 0, len(p.gpus))
	for _, g := range p.gpus {
		gpus = append(gpus, g)
	}
	p.mu.Unlock()
	now := p.now()
	byModel := map[string]*device.DeviceGroupStats{}
	var errs []error
	for _, g := range gpus {
		s, err := p.lib.Stats(g.UUID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		grp := byModel[g.Model]
		if grp == nil {
			grp = &device.DeviceGroupStats{Vendor: vendor, Type: deviceType, Name: g.Model, InstanceStats: map[string]*device.DeviceStats{}}
			byModel[g.Model] = grp
		}
		grp.InstanceStats[g.UUID] = deviceStats(s, now)
	}
	out := &device.StatsResponse{Error: errors.Join(errs...)}
	for _, g := range byModel {
		out.Groups = append(out.Groups, g)
	}
	return out
}

func deviceStats(s *gpuStats, now time.Time) *device.DeviceStats {
	attrs := map[string]*device.StatValue{}
	var summary *device.StatValue
	if s.UtilisationPct != nil {
		v := float64(*s.UtilisationPct)
		summary = &device.StatValue{FloatNumeratorVal: &v, Unit: "%", Desc: "GPU utilisation"}
		attrs["utilisation"] = summary
	}
	if s.MemoryUsedMiB != nil {
		attrs["memory"] = &device.StatValue{IntNumeratorVal: s.MemoryUsedMiB, IntDenominatorVal: s.MemoryTotalMiB, Unit: "MiB", Desc: "memory used"}
	}
	if s.TemperatureC != nil {
		v := int64(*s.TemperatureC)
		attrs["temperature"] = &device.StatValue{IntNumeratorVal: &v, Unit: "C", Desc: "GPU temperature"}
	}
	if s.PowerMilliW != nil {
		v := float64(*s.PowerMilliW) / 1000
		attrs["power"] = &device.StatValue{FloatNumeratorVal: &v, Unit: "W", Desc: "power draw"}
	}
	if summary == nil {
		summary = attrs["memory"]
	}
	return &device.DeviceStats{Summary: summary, Stats: &device.StatObject{Attributes: attrs}, Timestamp: now}
}

// Shutdown releases NVML if it was initialised.
func (p *Plugin) Shutdown() {
	p.mu.Lock()
	ok := p.inited && p.initErr == nil
	p.mu.Unlock()
	if ok {
		if err := p.lib.Shutdown(); err != nil {
			p.logger.Warn("NVML shutdown failed", "error", err)
		}
	}
}
