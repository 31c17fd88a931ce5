package grpcdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/base/grpcbase"
	baseproto "github.com/drover-io/drover/plugins/base/proto"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// pluginKind names the plugin in errors of its streams.
const pluginKind = "driver plugin"

// shortCallTimeout bounds the calls whose interface takes no context (Name,
// Capabilities).
const shortCallTimeout = 10 * time.Second

// Client is a driver in another process, reached over gRPC. It implements
// drivers.Plugin and drivers.EventsPlugin.
//
// When the plugin goes away, calls fail with errors wrapping
// drivers.ErrPluginUnavailable; Fingerprint sends an unhealthy fingerprint
// and closes; WaitTask delivers an ExitResult whose Err wraps
// drivers.ErrPluginUnavailable (the task itself may still run); TaskStats
// and TaskEvents close.
type Client struct {
	rpc proto.DriverClient

	mu   sync.Mutex // guards the fields below
	name string
}

var (
	_ drivers.Plugin       = (*Client)(nil)
	_ drivers.EventsPlugin = (*Client)(nil)
)

// NewClient returns a Client calling the driver served on conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: proto.NewDriverClient(conn)}
}

// PluginInfo describes the plugin.
func (c *Client) PluginInfo(ctx context.Context) (*base.PluginInfo, error) {
	resp, err := c.rpc.PluginInfo(ctx, &baseproto.PluginInfoRequest{})
	if err != nil {
		return nil, fromStatus("plugin info", err)
	}
	info := grpcbase.PluginInfoFromProto(resp)
	c.mu.Lock()
	c.name = info.Name
	c.mu.Unlock()
	return info, nil
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

// Name returns the driver's name, asking the plugin the first time; it is
// "" while the plugin cannot be reached.
func (c *Client) Name() string {
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	if name != "" {
		return name
	}
	ctx, cancel := context.WithTimeout(context.Background(), shortCallTimeout)
	defer cancel()
	info, err := c.PluginInfo(ctx)
	if err != nil {
		return ""
	}
	return info.Name
}

// Capabilities asks the plugin for its capabilities; while it cannot be
// reached, it reports none.
func (c *Client) Capabilities() *drivers.Capabilities {
	ctx, cancel := context.WithTimeout(context.Background(), shortCallTimeout)
	defer cancel()
	resp, err := c.rpc.Capabilities(ctx, &proto.CapabilitiesRequest{})
	if err != nil {
		return &drivers.Capabilities{}
	}
	return capabilitiesFromProto(resp.GetCapabilities())
}

// Fingerprint streams the driver's fingerprints until ctx is done. If the
// plugin goes away first, it sends an unhealthy fingerprint and closes.
func (c *Client) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	return grpcbase.ReadStream(ctx, "fingerprint", pluginKind, fromStatus,
		func(ctx context.Context) (grpc.ServerStreamingClient[proto.FingerprintResponse], error) {
			return c.rpc.Fingerprint(ctx, &proto.FingerprintRequest{})
		},
		func(r *proto.FingerprintResponse) *drivers.Fingerprint {
			return fingerprintFromProto(r.GetFingerprint())
		},
		func(err error) *drivers.Fingerprint {
			return &drivers.Fingerprint{
				Health:            drivers.HealthStateUnhealthy,
				HealthDescription: fromStatus("fingerprint", err).Error(),
			}
		})
}

// StartTask starts a task.
func (c *Client) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	resp, err := c.rpc.StartTask(ctx, &proto.StartTaskRequest{Config: taskConfigToProto(cfg)})
	if err != nil {
		return nil, fromStatus("start task", err)
	}
	h := handleFromProto(resp.GetHandle())
	if h == nil {
		return nil, errors.New("start task: driver plugin returned no handle")
	}
	return h, nil
}

// RecoverTask re-attaches to a task.
func (c *Client) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	_, err := c.rpc.RecoverTask(ctx, &proto.RecoverTaskRequest{Handle: handleToProto(h)})
	return fromStatus("recover task", err)
}

// WaitTask returns a channel that receives the task's ExitResult once and
// closes; it closes without a value when ctx is done first. If the plugin
// goes away, the result's Err wraps drivers.ErrPluginUnavailable.
func (c *Client) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := grpcbase.OpenStream(ctx, "wait task", pluginKind, fromStatus, func(ctx context.Context) (grpc.ServerStreamingClient[proto.WaitTaskResponse], error) {
		return c.rpc.WaitTask(ctx, &proto.WaitTaskRequest{TaskId: taskID})
	})
	if err != nil {
		cancel()
		return nil, err
	}
	ch := make(chan *drivers.ExitResult, 1)
	go func() {
		defer cancel()
		defer close(ch)
		resp, err := stream.Recv()
		switch {
		case err == nil:
			if res := exitResultFromProto(resp.GetResult()); res != nil {
				ch <- res
			}
		case ctx.Err() != nil, errors.Is(err, io.EOF):
			// The caller gave up, or the driver closed without a result.
		default:
			ch <- &drivers.ExitResult{Err: fromStatus(fmt.Sprintf("wait task %q", taskID), err)}
		}
	}()
	return ch, nil
}

// StopTask stops a task.
func (c *Client) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	_, err := c.rpc.StopTask(ctx, &proto.StopTaskRequest{TaskId: taskID, TimeoutNanos: int64(timeout), Signal: signal})
	return fromStatus("stop task", err)
}

// DestroyTask releases a task's resources.
func (c *Client) DestroyTask(ctx context.Context, taskID string, force bool) error {
	_, err := c.rpc.DestroyTask(ctx, &proto.DestroyTaskRequest{TaskId: taskID, Force: force})
	return fromStatus("destroy task", err)
}

// InspectTask returns a task's status.
func (c *Client) InspectTask(ctx context.Context, taskID string) (*drivers.TaskStatus, error) {
	resp, err := c.rpc.InspectTask(ctx, &proto.InspectTaskRequest{TaskId: taskID})
	if err != nil {
		return nil, fromStatus("inspect task", err)
	}
	st := taskStatusFromProto(resp.GetStatus())
	if st == nil {
		return nil, errors.New("inspect task: driver plugin returned no status")
	}
	return st, nil
}

// SignalTask signals a task.
func (c *Client) SignalTask(ctx context.Context, taskID string, signal string) error {
	_, err := c.rpc.SignalTask(ctx, &proto.SignalTaskRequest{TaskId: taskID, Signal: signal})
	return fromStatus("signal task", err)
}

// TaskStats streams a task's resource usage until ctx is done or the
// plugin goes away.
func (c *Client) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	return grpcbase.ReadStream(ctx, "task stats", pluginKind, fromStatus,
		func(ctx context.Context) (grpc.ServerStreamingClient[proto.TaskStatsResponse], error) {
			return c.rpc.TaskStats(ctx, &proto.TaskStatsRequest{TaskId: taskID, IntervalNanos: int64(interval)})
		},
		func(r *proto.TaskStatsResponse) *drivers.TaskResourceUsage {
			return usageFromProto(r.GetUsage())
		},
		nil)
}

// TaskEvents streams the driver's task events until ctx is done or the
// plugin goes away; a driver without events gives drivers.ErrNotSupported.
func (c *Client) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	return grpcbase.ReadStream(ctx, "task events", pluginKind, fromStatus,
		func(ctx context.Context) (grpc.ServerStreamingClient[proto.TaskEventsResponse], error) {
			return c.rpc.TaskEvents(ctx, &proto.TaskEventsRequest{})
		},
		func(r *proto.TaskEventsResponse) *drivers.TaskEvent {
			return taskEventFromProto(r.GetEvent())
		},
		nil)
}

// ExecTask runs a command in a task's context.
func (c *Client) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	resp, err := c.rpc.ExecTask(ctx, &proto.ExecTaskRequest{TaskId: taskID, Command: cmd, TimeoutNanos: int64(timeout)})
	if err != nil {
		return nil, fromStatus("exec task", err)
	}
	return execResultFromProto(resp), nil
}
