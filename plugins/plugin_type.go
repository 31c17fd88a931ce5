package plugins

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device/grpcdevice"
	"github.com/drover-io/drover/plugins/drivers/grpcdriver"
)

// One plugin_dir holds driver and device plugin binaries alike. The agent's
// side of every connection can dispense both kinds, so that Launch, given a
// device plugin, and LaunchDevice, given a driver, tell what the binary is
// (a PluginTypeError) instead of failing with a transport error; the
// driver manager and the device manager then each skip the other's
// binaries.

// PluginTypeError is returned by Launch for a binary that serves a device
// plugin, and by LaunchDevice (and ReattachDevice) for one that serves a
// driver: a plugin of another type, not a broken one.
type PluginTypeError struct {
	// Name and Type are what the plugin reports of itself.
	Name string
	Type string
	// Want is the type the caller launched it as.
	Want string
}

// Error says what the plugin is.
func (e *PluginTypeError) Error() string {
	return fmt.Sprintf("plugin %q is a %s plugin, not a %s plugin", e.Name, e.Type, e.Want)
}

// agentPluginSet is the plugin set of the agent's side of a connection:
// both kinds, dispensed on demand.
func agentPluginSet() plugin.PluginSet {
	return plugin.PluginSet{
		grpcdriver.PluginName: &grpcdriver.Plugin{},
		grpcdevice.PluginName: &grpcdevice.Plugin{},
	}
}

// pluginInfoer is what both kinds' clients answer.
type pluginInfoer interface {
	PluginInfo(ctx context.Context) (*base.PluginInfo, error)
}

// otherPluginInfo asks the plugin behind rpc for its info through the
// service of kind (grpcdriver.PluginName or grpcdevice.PluginName); nil
// when it does not serve that kind either.
func otherPluginInfo(ctx context.Context, rpc plugin.ClientProtocol, kind string) *base.PluginInfo {
	raw, err := rpc.Dispense(kind)
	if err != nil {
		return nil
	}
	p, ok := raw.(pluginInfoer)
	if !ok {
		return nil
	}
	info, err := p.PluginInfo(ctx)
	if err != nil || info == nil {
		return nil
	}
	return info
}
