package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device/grpcdevice"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/grpcdriver"
)

// defaultStartTimeout bounds a plugin's start when ctx has no deadline.
const defaultStartTimeout = time.Minute

// ReattachConfig is what the agent persists to reconnect to a running
// plugin process after a restart. It is plain JSON.
type ReattachConfig struct {
	// Protocol is go-plugin's protocol ("grpc").
	Protocol        string `json:"protocol"`
	ProtocolVersion int    `json:"protocol_version"`
	// Network and Address are the plugin's listener ("unix",
	// "/tmp/plugin123").
	Network string `json:"network"`
	Address string `json:"address"`
	Pid     int    `json:"pid"`
}

func reattachFromPlugin(rc *plugin.ReattachConfig) *ReattachConfig {
	return &ReattachConfig{
		Protocol:        string(rc.Protocol),
		ProtocolVersion: rc.ProtocolVersion,
		Network:         rc.Addr.Network(),
		Address:         rc.Addr.String(),
		Pid:             rc.Pid,
	}
}

func (r *ReattachConfig) toPlugin() (*plugin.ReattachConfig, error) {
	if r == nil || r.Pid <= 0 || r.Address == "" {
		return nil, errors.New("invalid reattach config: missing pid or address")
	}
	var addr net.Addr
	var err error
	switch r.Network {
	case "unix":
		addr, err = net.ResolveUnixAddr("unix", r.Address)
	case "tcp":
		addr, err = net.ResolveTCPAddr("tcp", r.Address)
	default:
		return nil, fmt.Errorf("invalid reattach config: unknown network %q", r.Network)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid reattach config: %w", err)
	}
	return &plugin.ReattachConfig{
		Protocol:        plugin.Protocol(r.Protocol),
		ProtocolVersion: r.ProtocolVersion,
		Addr:            addr,
		Pid:             r.Pid,
	}, nil
}

// Instance is a running driver plugin process and the agent's connection
// to it.
type Instance struct {
	client   *plugin.Client
	driver   *grpcdriver.Client
	info     *base.PluginInfo
	reattach *ReattachConfig
}

// Driver returns the plugin's driver. It implements drivers.Plugin and
// drivers.EventsPlugin; once the process is gone its calls fail with errors
// wrapping drivers.ErrPluginUnavailable.
func (i *Instance) Driver() *grpcdriver.Client { return i.driver }

// Info returns what the plugin said of itself when connected.
func (i *Instance) Info() *base.PluginInfo { return i.info }

// ReattachConfig returns what to persist to Reattach to this process.
func (i *Instance) ReattachConfig() *ReattachConfig { return i.reattach }

// Kill stops the plugin process (gracefully, then with SIGKILL after two
// seconds), closes the connection and waits for both. The driver's tasks
// are not stopped by it. Kill is safe on an exited plugin and releases the
// connection; to leave a plugin running across an agent restart, do not
// call it.
func (i *Instance) Kill() { i.client.Kill() }

// Exited reports whether the plugin process has exited.
func (i *Instance) Exited() bool { return i.client.Exited() }

// Launch starts the driver plugin binary at path with args and connects to
// it. ctx bounds the start (a minute without a deadline); the process
// outlives ctx, and runs in its own process group so that a signal to the
// agent's group does not reach it. The plugin's stderr is logged to logger.
func Launch(ctx context.Context, path string, args []string, logger *slog.Logger) (*Instance, error) {
	cmd := exec.Command(path, args...)
	ownProcessGroup(cmd)
	cfg := clientConfig(ctx, withAttr(logger, "plugin", filepath.Base(path)))
	cfg.Cmd = cmd
	inst, err := connect(ctx, plugin.NewClient(cfg))
	if err != nil {
		return nil, fmt.Errorf("launch plugin %s: %w", path, err)
	}
	return inst, nil
}

// Reattach connects to a plugin process a previous agent launched, from the
// ReattachConfig it persisted. It fails if that process has exited.
func Reattach(ctx context.Context, rc *ReattachConfig, logger *slog.Logger) (*Instance, error) {
	prc, err := rc.toPlugin()
	if err != nil {
		return nil, err
	}
	cfg := clientConfig(ctx, withAttr(logger, "plugin_pid", rc.Pid))
	cfg.Reattach = prc
	inst, err := connect(ctx, plugin.NewClient(cfg))
	if err != nil {
		return nil, fmt.Errorf("reattach to plugin pid %d: %w", rc.Pid, err)
	}
	return inst, nil
}

func clientConfig(ctx context.Context, logger *slog.Logger) *plugin.ClientConfig {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	timeout := defaultStartTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	return &plugin.ClientConfig{
		HandshakeConfig:  handshake(),
		Plugins:          agentPluginSet(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		// The plugin's stderr goes to logger line by line; go-plugin's
		// own logger would log those lines again, so it is silent: its
		// failures come back as errors.
		Stderr:     &slogWriter{logger: logger},
		SyncStdout: io.Discard,
		SyncStderr: &slogWriter{logger: logger},
		Logger:     hclog.NewNullLogger(),
	}
}

// connect completes a client's start, dispenses the driver and checks that
// the plugin is a driver speaking our API; on failure it kills the client.
func connect(ctx context.Context, client *plugin.Client) (_ *Instance, err error) {
	defer func() {
		if err != nil {
			client.Kill()
		}
	}()
	rpc, err := client.Client()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := rpc.Dispense(grpcdriver.PluginName)
	if err != nil {
		return nil, fmt.Errorf("dispense driver: %w", err)
	}
	driver, ok := raw.(*grpcdriver.Client)
	if !ok {
		return nil, fmt.Errorf("dispense driver: unexpected %T", raw)
	}
	info, err := driver.PluginInfo(ctx)
	if err != nil {
		if other := otherPluginInfo(ctx, rpc, grpcdevice.PluginName); other != nil {
			return nil, &PluginTypeError{Name: other.Name, Type: other.Type, Want: base.PluginTypeDriver}
		}
		return nil, err
	}
	if info.Type != base.PluginTypeDriver {
		return nil, fmt.Errorf("plugin %q is a %q plugin, not a driver", info.Name, info.Type)
	}
	if !slices.Contains(info.PluginAPIVersions, drivers.APIVersion) {
		return nil, fmt.Errorf("driver plugin %q speaks API versions %v, this agent speaks %q",
			info.Name, info.PluginAPIVersions, drivers.APIVersion)
	}
	rc := client.ReattachConfig()
	if rc == nil {
		return nil, errors.New("plugin gave no reattach config")
	}
	return &Instance{client: client, driver: driver, info: info, reattach: reattachFromPlugin(rc)}, nil
}

func withAttr(logger *slog.Logger, key string, value any) *slog.Logger {
	if logger == nil {
		return nil
	}
	return logger.With(key, value)
}
