package fake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
)

// pluginVersion is the fake plugin's own version.
const pluginVersion = "0.1.0"

// defaultStatsInterval is used when Stats is asked for a non-positive one.
const defaultStatsInterval = time.Second

// errCrashed is what a crashed fake plugin answers.
var errCrashed = errors.New("fake_device: plugin crashed (fail_mode = \"crash\")")

// Plugin is the fake device plugin.
type Plugin struct {
	logger *slog.Logger
	now    func() time.Time

	mu       sync.Mutex // guards the fields below
	cfg      Config
	reserved map[string]bool
}

var _ device.DevicePlugin = (*Plugin)(nil)

// Option configures a Plugin.
type Option func(*Plugin)

// WithClock sets the clock stats are stamped with.
func WithClock(now func() time.Time) Option { return func(p *Plugin) { p.now = now } }

// New returns a fake plugin configured with the schema's defaults (two
// healthy "drover/gpu/fake" instances) until SetConfig says otherwise.
func New(logger *slog.Logger, opts ...Option) *Plugin {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{logger: logger, now: time.Now, reserved: map[string]bool{}}
	for _, o := range opts {
		o(p)
	}
	if raw, err := schema().Validate(PluginName, nil); err == nil {
		_ = (&base.Config{PluginConfig: raw}).DecodePluginConfig(&p.cfg)
	}
	return p
}

// PluginInfo describes the plugin.
func (p *Plugin) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{Type: base.PluginTypeDevice, PluginAPIVersions: []string{device.APIVersion},
		PluginVersion: pluginVersion, Name: PluginName}, nil
}

// ConfigSchema describes the config block.
func (p *Plugin) ConfigSchema(context.Context) (*base.Schema, error) { return schema(), nil }

// SetConfig applies the config block (already completed with defaults by
// the agent).
func (p *Plugin) SetConfig(_ context.Context, cfg *base.Config) error {
	p.mu.Lock()
	next := p.cfg
	p.mu.Unlock()
	if cfg != nil && len(cfg.PluginConfig) > 0 {
		next = Config{}
		if err := cfg.DecodePluginConfig(&next); err != nil {
			return err
		}
	}
	if err := next.check(); err != nil {
		return &base.ConfigError{Plugin: PluginName, Field: "fail_mode", Err: err}
	}
	p.mu.Lock()
	p.cfg = next
	p.mu.Unlock()
	return nil
}

func (p *Plugin) config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Fingerprint sends the configured device group once and keeps the stream
// open until ctx is done.
func (p *Plugin) Fingerprint(ctx context.Context) (<-chan *device.FingerprintResponse, error) {
	cfg := p.config()
	ch := make(chan *device.FingerprintResponse, 1)
	switch cfg.FailMode {
	case FailCrash:
		close(ch)
		return ch, nil
	case FailHang:
		go func() {
			defer close(ch)
			<-ctx.Done()
		}()
		return ch, nil
	}
	ch <- &device.FingerprintResponse{Devices: groups(cfg)}
	go func() {
		defer close(ch)
		<-ctx.Done()
	}()
	return ch, nil
}

// groups builds the fingerprint of cfg.
func groups(cfg Config) []*device.DeviceGroup {
	g := &device.DeviceGroup{Vendor: cfg.Vendor, Type: cfg.Type, Name: cfg.Name,
		Attributes: make(map[string]*device.Attribute, len(cfg.Attributes))}
	for k, v := range cfg.Attributes {
		g.Attributes[k] = device.ParseAttribute(v)
	}
	for _, id := range cfg.Instances {
		d := &device.Device{ID: id, Healthy: true}
		if slices.Contains(cfg.Unhealthy, id) {
			d.Healthy, d.HealthDesc = false, "configured unhealthy"
		}
		g.Devices = append(g.Devices, d)
	}
	if cfg.FailMode != FailBadOutput {
		return []*device.DeviceGroup{g}
	}
	unnamed := &device.DeviceGroup{Type: cfg.Type, Name: cfg.Name, Devices: []*device.Device{{ID: "unnamed-0", Healthy: true}}}
	if len(g.Devices) > 0 {
		g.Devices = append(g.Devices, &device.Device{ID: g.Devices[0].ID, Healthy: true})
	}
	return []*device.DeviceGroup{g, unnamed}
}

// Reserve hands the task FAKE_VISIBLE_DEVICES with the reserved IDs.
func (p *Plugin) Reserve(ctx context.Context, ids []string) (*device.ContainerReservation, error) {
	cfg := p.config()
	switch cfg.FailMode {
	case FailCrash:
		return nil, errCrashed
	case FailHang:
		<-ctx.Done()
		return nil, ctx.Err()
	case FailBadOutput:
		return &device.ContainerReservation{Mounts: []*device.Mount{{TaskPath: "/fake"}}}, nil
	}
	for _, id := range ids {
		if !slices.Contains(cfg.Instances, id) {
			return nil, fmt.Errorf("reserve %q: %w", id, device.ErrUnknownDevice)
		}
		if slices.Contains(cfg.Unhealthy, id) {
			return nil, fmt.Errorf("reserve %q: device is unhealthy", id)
		}
	}
	p.mu.Lock()
	for _, id := range ids {
		p.reserved[id] = true
	}
	p.mu.Unlock()
	return &device.ContainerReservation{Envs: map[string]string{"FAKE_VISIBLE_DEVICES": strings.Join(ids, ",")}}, nil
}

// Stats sends the instances' statistics at once and then every interval.
func (p *Plugin) Stats(ctx context.Context, interval time.Duration) (<-chan *device.StatsResponse, error) {
	if interval <= 0 {
		interval = defaultStatsInterval
	}
	cfg := p.config()
	ch := make(chan *device.StatsResponse)
	if cfg.FailMode == FailCrash {
		close(ch)
		return ch, nil
	}
	go func() {
		defer close(ch)
		if cfg.FailMode == FailHang {
			<-ctx.Done()
			return
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case ch <- p.stats(cfg):
			case <-ctx.Done():
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// stats reports each instance: utilisation 50 % and a quarter of its memory
// used while reserved, idle otherwise.
func (p *Plugin) stats(cfg Config) *device.StatsResponse {
	now := p.now()
	var totalMiB int64
	if a := device.ParseAttribute(cfg.Attributes["memory"]); a.Int != nil {
		if fam, f, ok := device.UnitFactor(a.Unit); ok && fam == "byte" {
			totalMiB = int64(float64(*a.Int) * f / (1 << 20))
		}
	}
	g := &device.DeviceGroupStats{Vendor: cfg.Vendor, Type: cfg.Type, Name: cfg.Name,
		InstanceStats: make(map[string]*device.DeviceStats, len(cfg.Instances))}
	p.mu.Lock()
	for _, id := range cfg.Instances {
		util, used := 0.0, int64(0)
		if p.reserved[id] {
			util, used = 50, totalMiB/4
		}
		g.InstanceStats[id] = &device.DeviceStats{
			Summary: &device.StatValue{FloatNumeratorVal: &util, Unit: "%", Desc: "utilisation"},
			Stats: &device.StatObject{Attributes: map[string]*device.StatValue{
				"utilisation": {FloatNumeratorVal: new(util), Unit: "%", Desc: "utilisation"},
				"memory":      {IntNumeratorVal: new(used), IntDenominatorVal: new(totalMiB), Unit: "MiB", Desc: "memory used"},
			}},
			Timestamp: now,
		}
	}
	p.mu.Unlock()
	if cfg.FailMode == FailBadOutput {
		g.InstanceStats["ghost"] = &device.DeviceStats{Summary: &device.StatValue{StringVal: new("boo")}, Timestamp: now}
	}
	return &device.StatsResponse{Groups: []*device.DeviceGroupStats{g}}
}
