package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"os/signal"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/grpcdevice"
	"github.com/drover-io/drover/plugins/drivers/grpcdriver"
)

// devicePluginSet is the plugin set of a device plugin process; impl is nil
// on the agent's side.
func devicePluginSet(impl device.DevicePlugin) plugin.PluginSet {
	return plugin.PluginSet{grpcdevice.PluginName: &grpcdevice.Plugin{Impl: impl}}
}

// ServeDevice serves device plugin d as a plugin process until the agent
// kills it; it is the whole main of a device plugin binary.
func ServeDevice(d device.DevicePlugin, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	signal.Ignore(syscall.SIGPIPE)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake(),
		Plugins:         devicePluginSet(d),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "plugin",
			Level:      hclog.Warn,
			Output:     &slogWriter{logger: logger},
			JSONFormat: true,
		}),
	})
}

// DeviceInstance is a running device plugin process and the agent's
// connection to it.
type DeviceInstance struct {
	client   *plugin.Client
	dev      *grpcdevice.Client
	info     *base.PluginInfo
	reattach *ReattachConfig
}

// ReattachConfig returns what to persist to ReattachDevice to this process
// (after an agent crash: a stopping agent kills its device plugins).
func (i *DeviceInstance) ReattachConfig() *ReattachConfig { return i.reattach }

// Device returns the plugin; once the process is gone its calls fail with
// errors wrapping device.ErrPluginUnavailable.
func (i *DeviceInstance) Device() *grpcdevice.Client { return i.dev }

// Info returns what the plugin said of itself when connected.
func (i *DeviceInstance) Info() *base.PluginInfo { return i.info }

// Kill stops the plugin process and closes the connection.
func (i *DeviceInstance) Kill() { i.client.Kill() }

// Exited reports whether the plugin process has exited.
func (i *DeviceInstance) Exited() bool { return i.client.Exited() }

// LaunchDevice starts the device plugin binary at path with args and
// connects to it; ctx bounds the start. Unlike a driver, a device plugin has
// no tasks to outlive the agent: the agent kills it on shutdown.
func LaunchDevice(ctx context.Context, path string, args []string, logger *slog.Logger) (*DeviceInstance, error) {
	cmd := exec.Command(path, args...)
	ownProcessGroup(cmd)
	cfg := clientConfig(ctx, withAttr(logger, "plugin", filepath.Base(path)))
	cfg.Cmd = cmd
	inst, err := connectDevice(ctx, plugin.NewClient(cfg))
	if err != nil {
		return nil, fmt.Errorf("launch device plugin %s: %w", path, err)
	}
	return inst, nil
}

// ReattachDevice connects to a device plugin process a previous agent
// launched, from the ReattachConfig it persisted. It fails if that process
// has exited or is not a device plugin.
func ReattachDevice(ctx context.Context, rc *ReattachConfig, logger *slog.Logger) (*DeviceInstance, error) {
	prc, err := rc.toPlugin()
	if err != nil {
		return nil, err
	}
	cfg := clientConfig(ctx, withAttr(logger, "plugin_pid", rc.Pid))
	cfg.Reattach = prc
	inst, err := connectDevice(ctx, plugin.NewClient(cfg))
	if err != nil {
		return nil, fmt.Errorf("reattach to device plugin pid %d: %w", rc.Pid, err)
	}
	return inst, nil
}

// connectDevice completes a client's start, dispenses the device plugin and
// checks that it speaks our API; on failure it kills the client.
func connectDevice(ctx context.Context, client *plugin.Client) (_ *DeviceInstance, err error) {
	defer func() {
		if err != nil {
			client.Kill()
		}
	}()
	rpc, err := client.Client()
	if err != nil {
		return nil, err
	}
	raw, err := rpc.Dispense(grpcdevice.PluginName)
	if err != nil {
		return nil, fmt.Errorf("dispense device plugin: %w", err)
	}
	dev, ok := raw.(*grpcdevice.Client)
	if !ok {
		return nil, errors.New("dispense device plugin: unexpected type")
	}
	info, err := dev.PluginInfo(ctx)
	if err != nil {
		if other := otherPluginInfo(ctx, rpc, grpcdriver.PluginName); other != nil {
			return nil, &PluginTypeError{Name: other.Name, Type: other.Type, Want: base.PluginTypeDevice}
		}
		return nil, err
	}
	if info.Type != base.PluginTypeDevice {
		return nil, fmt.Errorf("plugin %q is a %q plugin, not a device plugin", info.Name, info.Type)
	}
	if !slices.Contains(info.PluginAPIVersions, device.APIVersion) {
		return nil, fmt.Errorf("device plugin %q speaks API versions %v, this agent speaks %q",
			info.Name, info.PluginAPIVersions, device.APIVersion)
	}
	rc := client.ReattachConfig()
	if rc == nil {
		return nil, errors.New("device plugin gave no reattach config")
	}
	return &DeviceInstance{client: client, dev: dev, info: info, reattach: reattachFromPlugin(rc)}, nil
}
