package grpcdevice

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

// PluginName is the device plugin's name in go-plugin's plugin set.
const PluginName = "device"

// Plugin binds the device transport to hashicorp/go-plugin: in a plugin
// process Impl is the plugin served; in the agent Impl is unused and
// dispensing yields a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl device.DevicePlugin
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the device gRPC service.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	proto.RegisterDeviceServer(s, NewServer(p.Impl))
	return nil
}

// GRPCClient returns a *Client on conn.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn), nil
}
