package devicetest

import (
	"context"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
)

// Plugin is a scriptable device plugin. Its Fingerprint and Stats streams
// send what the test puts on FingerprintCh and StatsCh; nil function fields
// give sensible defaults.
type Plugin struct {
	// Name is the plugin's name in PluginInfo ("mock_device").
	Name string
	// FingerprintCh and StatsCh feed every Fingerprint and Stats stream
	// (one stream at a time is expected).
	FingerprintCh chan *device.FingerprintResponse
	StatsCh       chan *device.StatsResponse
	// FingerprintErr, when set, is returned by Fingerprint.
	FingerprintErr error
	// ReserveFn answers Reserve; nil: an empty reservation.
	ReserveFn func(ctx context.Context, ids []string) (*device.ContainerReservation, error)
	// SetConfigFn answers SetConfig; nil: accept.
	SetConfigFn func(ctx context.Context, cfg *base.Config) error
}

var _ device.DevicePlugin = (*Plugin)(nil)

// NewPlugin returns a Plugin named name with unbuffered streams.
func NewPlugin(name string) *Plugin {
	return &Plugin{
		Name:          name,
		FingerprintCh: make(chan *device.FingerprintResponse),
		StatsCh:       make(chan *device.StatsResponse),
	}
}

// PluginInfo describes the plugin as a device plugin of this SDK.
func (p *Plugin) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{Type: base.PluginTypeDevice, PluginAPIVersions: []string{device.APIVersion},
		PluginVersion: "0.0.1", Name: p.Name}, nil
}

// ConfigSchema is empty.
func (p *Plugin) ConfigSchema(context.Context) (*base.Schema, error) { return &base.Schema{}, nil }

// SetConfig calls SetConfigFn.
func (p *Plugin) SetConfig(ctx context.Context, cfg *base.Config) error {
	if p.SetConfigFn != nil {
		return p.SetConfigFn(ctx, cfg)
	}
	return nil
}

// Fingerprint relays FingerprintCh until ctx is done or it closes.
func (p *Plugin) Fingerprint(ctx context.Context) (<-chan *device.FingerprintResponse, error) {
	if p.FingerprintErr != nil {
		return nil, p.FingerprintErr
	}
	return relay(ctx, p.FingerprintCh), nil
}

// Reserve calls ReserveFn.
func (p *Plugin) Reserve(ctx context.Context, ids []string) (*device.ContainerReservation, error) {
	if p.ReserveFn != nil {
		return p.ReserveFn(ctx, ids)
	}
	return &device.ContainerReservation{}, nil
}

// Stats relays StatsCh until ctx is done or it closes.
func (p *Plugin) Stats(ctx context.Context, _ time.Duration) (<-chan *device.StatsResponse, error) {
	return relay(ctx, p.StatsCh), nil
}

// relay copies in to a new channel until ctx is done or in closes; the
// goroutine it starts ends with ctx.
func relay[T any](ctx context.Context, in <-chan T) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case v, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- v:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
