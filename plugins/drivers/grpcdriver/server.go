package grpcdriver

import (
	"context"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/base/grpcbase"
	baseproto "github.com/drover-io/drover/plugins/base/proto"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// Server serves a driver over gRPC in a plugin process. A driver that is
// not a base.BasePlugin gets a PluginInfo made from its Name, an empty
// schema and a SetConfig that accepts anything; one that is not a
// drivers.EventsPlugin answers TaskEvents with drivers.ErrNotSupported.
type Server struct {
	proto.UnimplementedDriverServer
	impl drivers.DriverPlugin
}

var _ proto.DriverServer = (*Server)(nil)

// NewServer returns a Server calling impl.
func NewServer(impl drivers.DriverPlugin) *Server {
	return &Server{impl: impl}
}

// PluginInfo describes the driver.
func (s *Server) PluginInfo(ctx context.Context, _ *baseproto.PluginInfoRequest) (*baseproto.PluginInfoResponse, error) {
	bp, ok := s.impl.(base.BasePlugin)
	if !ok {
		return grpcbase.PluginInfoToProto(&base.PluginInfo{
			Type:              base.PluginTypeDriver,
			PluginAPIVersions: []string{drivers.APIVersion},
			Name:              s.impl.Name(),
		}), nil
	}
	info, err := bp.PluginInfo(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return grpcbase.PluginInfoToProto(info), nil
}

// ConfigSchema describes the driver's config block.
func (s *Server) ConfigSchema(ctx context.Context, _ *baseproto.ConfigSchemaRequest) (*baseproto.ConfigSchemaResponse, error) {
	bp, ok := s.impl.(base.BasePlugin)
	if !ok {
		return grpcbase.SchemaToProto(nil), nil
	}
	schema, err := bp.ConfigSchema(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return grpcbase.SchemaToProto(schema), nil
}

// SetConfig configures the driver.
func (s *Server) SetConfig(ctx context.Context, req *baseproto.SetConfigRequest) (*baseproto.SetConfigResponse, error) {
	if bp, ok := s.impl.(base.BasePlugin); ok {
		if err := bp.SetConfig(ctx, grpcbase.ConfigFromProto(req)); err != nil {
			return nil, toStatus(err)
		}
	}
	return &baseproto.SetConfigResponse{}, nil
}

// Capabilities describes the driver's optional features.
func (s *Server) Capabilities(context.Context, *proto.CapabilitiesRequest) (*proto.CapabilitiesResponse, error) {
	return &proto.CapabilitiesResponse{Capabilities: capabilitiesToProto(s.impl.Capabilities())}, nil
}

// Fingerprint streams the driver's fingerprints.
func (s *Server) Fingerprint(_ *proto.FingerprintRequest, stream grpc.ServerStreamingServer[proto.FingerprintResponse]) error {
	ch, err := s.impl.Fingerprint(stream.Context())
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(fp *drivers.Fingerprint) *proto.FingerprintResponse {
		return &proto.FingerprintResponse{Fingerprint: fingerprintToProto(fp)}
	}, toStatus)
}

// StartTask starts a task.
func (s *Server) StartTask(ctx context.Context, req *proto.StartTaskRequest) (*proto.StartTaskResponse, error) {
	h, err := s.impl.StartTask(ctx, taskConfigFromProto(req.GetConfig()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &proto.StartTaskResponse{Handle: handleToProto(h)}, nil
}

// RecoverTask re-attaches to a task.
func (s *Server) RecoverTask(ctx context.Context, req *proto.RecoverTaskRequest) (*proto.RecoverTaskResponse, error) {
	if err := s.impl.RecoverTask(ctx, handleFromProto(req.GetHandle())); err != nil {
		return nil, toStatus(err)
	}
	return &proto.RecoverTaskResponse{}, nil
}

// WaitTask streams the task's exit result once it has exited.
func (s *Server) WaitTask(req *proto.WaitTaskRequest, stream grpc.ServerStreamingServer[proto.WaitTaskResponse]) error {
	ch, err := s.impl.WaitTask(stream.Context(), req.GetTaskId())
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(res *drivers.ExitResult) *proto.WaitTaskResponse {
		return &proto.WaitTaskResponse{Result: exitResultToProto(res)}
	}, toStatus)
}

// StopTask stops a task.
func (s *Server) StopTask(ctx context.Context, req *proto.StopTaskRequest) (*proto.StopTaskResponse, error) {
	err := s.impl.StopTask(ctx, req.GetTaskId(), time.Duration(req.GetTimeoutNanos()), req.GetSignal())
	if err != nil {
		return nil, toStatus(err)
	}
	return &proto.StopTaskResponse{}, nil
}

// DestroyTask releases a task's resources.
func (s *Server) DestroyTask(ctx context.Context, req *proto.DestroyTaskRequest) (*proto.DestroyTaskResponse, error) {
	if err := s.impl.DestroyTask(ctx, req.GetTaskId(), req.GetForce()); err != nil {
		return nil, toStatus(err)
	}
	return &proto.DestroyTaskResponse{}, nil
}

// InspectTask returns a task's status.
func (s *Server) InspectTask(ctx context.Context, req *proto.InspectTaskRequest) (*proto.InspectTaskResponse, error) {
	st, err := s.impl.InspectTask(ctx, req.GetTaskId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &proto.InspectTaskResponse{Status: taskStatusToProto(st)}, nil
}

// SignalTask signals a task.
func (s *Server) SignalTask(ctx context.Context, req *proto.SignalTaskRequest) (*proto.SignalTaskResponse, error) {
	if err := s.impl.SignalTask(ctx, req.GetTaskId(), req.GetSignal()); err != nil {
		return nil, toStatus(err)
	}
	return &proto.SignalTaskResponse{}, nil
}

// TaskStats streams a task's resource usage.
func (s *Server) TaskStats(req *proto.TaskStatsRequest, stream grpc.ServerStreamingServer[proto.TaskStatsResponse]) error {
	ch, err := s.impl.TaskStats(stream.Context(), req.GetTaskId(), time.Duration(req.GetIntervalNanos()))
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(u *drivers.TaskResourceUsage) *proto.TaskStatsResponse {
		return &proto.TaskStatsResponse{Usage: usageToProto(u)}
	}, toStatus)
}

// TaskEvents streams the driver's task events.
func (s *Server) TaskEvents(_ *proto.TaskEventsRequest, stream grpc.ServerStreamingServer[proto.TaskEventsResponse]) error {
	ep, ok := s.impl.(drivers.EventsPlugin)
	if !ok {
		return toStatus(drivers.ErrNotSupported)
	}
	ch, err := ep.TaskEvents(stream.Context())
	if err != nil {
		return toStatus(err)
	}
	return grpcbase.Forward(stream, ch, func(ev *drivers.TaskEvent) *proto.TaskEventsResponse {
		return &proto.TaskEventsResponse{Event: taskEventToProto(ev)}
	}, toStatus)
}

// ExecTask runs a command in a task's context.
func (s *Server) ExecTask(ctx context.Context, req *proto.ExecTaskRequest) (*proto.ExecTaskResponse, error) {
	res, err := s.impl.ExecTask(ctx, req.GetTaskId(), req.GetCommand(), time.Duration(req.GetTimeoutNanos()))
	if err != nil {
		return nil, toStatus(err)
	}
	return execResultToProto(res), nil
}
