package grpcdevice

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/base/grpcbase"
	baseproto "github.com/drover-io/drover/plugins/base/proto"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

// pluginKind names the plugin in errors of its streams.
const pluginKind = "device plugin"

// Client is a device plugin in another process, reached over gRPC. It
// implements device.DevicePlugin.
//
// When the plugin goes away, calls fail with errors wrapping
// device.ErrPluginUnavailable, and Fingerprint and Stats send one value whose
// Error says so, then close.
type Client struct {
	rpc proto.DeviceClient
}

var _ device.DevicePlugin = (*Client)(nil)

// NewClient returns a Client calling the device plugin served on conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: proto.NewDeviceClient(conn)}
}

// PluginInfo describes the plugin.
func (c *Client) PluginInfo(ctx context.Context) (*base.PluginInfo, error) {
	resp, err := c.rpc.PluginInfo(ctx, &baseproto.PluginInfoRequest{})
	if err != nil {
		return nil, fromStatus("plugin info", err)
	}
	return grpcbase.PluginInfoFromProto(resp), nil
}

// ConfigSchema describes the plugin's config block.
func (c *Client) ConfigSchema(ctx context.Context) (*base.Schema, error) {
	resp, err := c.rpc.ConfigSchema(ctx, &baseproto.ConfigSchemaRequest{})
	if err != nil {
		return nil, fromStatus("config schema", err)
	}
	return grpcbase.SchemaFromProto(resp), nil
}

// SetConfig configures the plugin.
func (c *Client) SetConfig(ctx context.Context, cfg *base.Config) error {
	_, err := c.rpc.SetConfig(ctx, grpcbase.ConfigToProto(cfg))
	return fromStatus("set config", err)
}

// Fingerprint streams the plugin's device groups until ctx is done.
func (c *Client) Fingerprint(ctx context.Context) (<-chan *device.FingerprintResponse, error) {
	return grpcbase.ReadStream(ctx, "fingerprint", pluginKind, fromStatus,
		func(ctx context.Context) (grpc.ServerStreamingClient[proto.FingerprintResponse], error) {
			return c.rpc.Fingerprint(ctx, &proto.FingerprintRequest{})
		},
		func(r *proto.FingerprintResponse) *device.FingerprintResponse {
			if fp := fingerprintFromProto(r.GetFingerprint()); fp != nil {
				return fp
			}
			return &device.FingerprintResponse{}
		},
		func(err error) *device.FingerprintResponse {
			return &device.FingerprintResponse{Error: fromStatus("fingerprint", err)}
		})
}

// Reserve reserves devices for a task.
func (c *Client) Reserve(ctx context.Context, deviceIDs []string) (*device.ContainerReservation, error) {
	resp, err := c.rpc.Reserve(ctx, &proto.ReserveRequest{DeviceIds: deviceIDs})
	if err != nil {
		return nil, fromStatus("reserve", err)
	}
	r := reservationFromProto(resp.GetReservation())
	if r == nil {
		return nil, errors.New("reserve: device plugin returned no reservation")
	}
	return r, nil
}

// Stats streams the devices' statistics until ctx is done.
func (c *Client) Stats(ctx context.Context, interval time.Duration) (<-chan *device.StatsResponse, error) {
	return grpcbase.ReadStream(ctx, "stats", pluginKind, fromStatus,
		func(ctx context.Context) (grpc.ServerStreamingClient[proto.StatsResponse], error) {
			return c.rpc.Stats(ctx, &proto.StatsRequest{IntervalNanos: int64(interval)})
		},
		func(r *proto.StatsResponse) *device.StatsResponse {
			if st := statsFromProto(r.GetStats()); st != nil {
				return st
			}
			return &device.StatsResponse{}
		},
		func(err error) *device.StatsResponse {
			return &device.StatsResponse{Error: fromStatus("stats", err)}
		})
}
