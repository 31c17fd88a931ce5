package grpcdriver

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// PluginName is the driver's name in go-plugin's plugin set.
const PluginName = "driver"

// Plugin binds the driver transport to hashicorp/go-plugin: in a plugin
// process Impl is the driver served; in the agent Impl is unused and
// dispensing yields a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl drivers.DriverPlugin
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the driver's gRPC service.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	proto.RegisterDriverServer(s, NewServer(p.Impl))
	return nil
}

// GRPCClient returns a *Client on conn.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn), nil
}
