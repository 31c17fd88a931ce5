package grpcdevice

import (
	"context"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/base/grpcbase"
	baseproto "github.com/drover-io/drover/plugins/base/proto"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

// Server serves a device plugin over gRPC in a plugin process.
type Server struct {
	proto.UnimplementedDeviceServer
	impl device.DevicePlugin
}

var _ proto.DeviceServer = (*Server)(nil)

// NewServer returns a Server calling impl.
func NewServer(impl device.DevicePlugin) *Server { return &Server{impl: impl} }

// PluginInfo describes the plugin.
func (s *Server) PluginInfo(ctx context.Context, _ *baseproto.PluginInfoRequest) (*baseproto.PluginInfoResponse, error) {
	info, err := s.impl.PluginInfo(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return grpcbase.PluginInfoToProto(info), nil
}

// ConfigSchema describes the plugin's config block.
func (s *Server) ConfigSchema(ctx context.Context, _ *baseproto.ConfigSchemaRequest) (*baseproto.ConfigSchemaResponse, error) {
	schema, err := s.impl.ConfigSchema(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return grpcbase.SchemaToProto(schema), nil
}

// SetConfig configures the plugin.
func (s *Server) SetConfig(ctx context.Context, req *baseproto.SetConfigRequest) (*baseproto.SetConfigResponse, error) {
	if err := s.impl.SetConfig(ctx, grpcbase.ConfigFromProto(req)); err != nil {
		return nil, toStatus(err)
	}
	return &baseproto.SetConfigResponse{}, nil
}

// Fingerprint streams the plugin's device groups.
func (s *Server) Fingerprint(_ *proto.FingerprintRequest, stream grpc.ServerStreamingServer[proto.FingerprintResponse]) error {
	ch, err := s.impl.Fingerprint(stream.Context())
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(fp *device.FingerprintResponse) *proto.FingerprintResponse {
		return &proto.FingerprintResponse{Fingerprint: fingerprintToProto(fp)}
	}, toStatus)
}

// Reserve reserves devices for a task.
func (s *Server) Reserve(ctx context.Context, req *proto.ReserveRequest) (*proto.ReserveResponse, error) {
	r, err := s.impl.Reserve(ctx, req.GetDeviceIds())
	if err != nil {
		return nil, toStatus(err)
	}
	return &proto.ReserveResponse{Reservation: reservationToProto(r)}, nil
}

// Stats streams the devices' statistics.
func (s *Server) Stats(req *proto.StatsRequest, stream grpc.ServerStreamingServer[proto.StatsResponse]) error {
	ch, err := s.impl.Stats(stream.Context(), time.Duration(req.GetIntervalNanos()))
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(st *device.StatsResponse) *proto.StatsResponse {
		return &proto.StatsResponse{Stats: statsToProto(st)}
	}, toStatus)
}
