package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// driverStartTimeout bounds the driver manager's start (plugin launches,
// configuration, first fingerprints).
const driverStartTimeout = 2 * time.Minute

// newDriverManager builds the driver manager from the config: the
// DriverManager config, plus the deprecated Drivers map wrapped as
// built-in drivers.
func (c *Client) newDriverManager(cfg *Config) *drivermanager.Manager {
	var dm drivermanager.Config
	if cfg.DriverManager != nil {
		dm = *cfg.DriverManager
	}
	if len(cfg.Drivers) > 0 {
		builtIn := make(map[string]drivermanager.Factory, len(dm.BuiltIn)+len(cfg.Drivers))
		maps.Copy(builtIn, dm.BuiltIn)
		for name, d := range cfg.Drivers {
			builtIn[name] = func(*slog.Logger, json.RawMessage) (drivers.DriverPlugin, error) {
				return borrowedDriver{d}, nil
			}
		}
		dm.BuiltIn = builtIn
	}
	dm.Logger = c.logger.With("component", "drivermanager")
	dm.State = c.stateDB
	dm.UpdateNode = c.UpdateNodeFromDriver
	dm.KillOnShutdown = cfg.DevMode
	return drivermanager.New(dm)
}

// borrowedDriver is a driver of the deprecated Config.Drivers map: its
// caller owns it, so the embedding hides any Shutdown method from the
// driver manager, which shuts down the drivers it was given.
type borrowedDriver struct{ drivers.DriverPlugin }

// startDrivers starts the driver manager; its first fingerprints are in
// the node when it returns.
func (c *Client) startDrivers() error {
	ctx, cancel := context.WithTimeout(context.Background(), driverStartTimeout)
	defer cancel()
	return c.drivers.Start(ctx)
}

// driver returns the named driver from the driver manager.
func (c *Client) driver(name string) (drivers.DriverPlugin, error) {
	return c.drivers.Dispense(name)
}

// DriverManager returns the client's driver manager (task runners use it
// to register task event handlers).
func (c *Client) DriverManager() *drivermanager.Manager { return c.drivers }

// UpdateNodeFromDriver records a driver's new DriverInfo in the node:
// Drivers[name] and, while it is detected, its attributes (driver.NAME,
// driver.NAME.version, ...), dropping those of its earlier report. When the
// driver's detection, health or ability to mount changed after the node
// registered, the servers are sent the new node.
func (c *Client) UpdateNodeFromDriver(name string, info *structs.DriverInfo) {
	if info == nil {
		return
	}
	var prev *structs.DriverInfo
	c.updateNode(func(n *structs.Node) {
		prev = n.Drivers[name]
		if n.Drivers == nil {
			n.Drivers = make(map[string]*structs.DriverInfo)
		}
		n.Drivers[name] = info
		prefix := "driver." + name + "."
		for k := range n.Attributes {
			if k == "driver."+name || strings.HasPrefix(k, prefix) {
				delete(n.Attributes, k)
			}
		}
		if prev != nil {
			for k := range prev.Attributes {
				delete(n.Attributes, k)
			}
		}
		if info.Detected {
			if n.Attributes == nil {
				n.Attributes = map[string]string{}
			}
			maps.Copy(n.Attributes, info.Attributes)
		}
	})
	if prev == nil || prev.Detected != info.Detected || prev.Healthy != info.Healthy || prev.MountsUnsupported != info.MountsUnsupported {
		c.signalNodeChanged()
	}
}

// nodeUpdateLoop sends the node to the servers (re-registering it) after
// a driver's detection or health, a device or the node's metadata
// changed, once the node is registered.
// Changes within updateInterval are sent together.
func (c *Client) nodeUpdateLoop() {
	defer c.wg.Done()
	select {
	case <-c.registered:
	case <-c.ctx.Done():
		return
	}
	// The registration sent the node as it was then; a change signalled
	// before it may be in it already, and sending again is harmless.
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.nodeChanged:
		}
		timer := time.NewTimer(c.updateInterval)
		select {
		case <-c.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		for attempt := 1; ; attempt++ {
			node := c.Node()
			node.Status = structs.NodeStatusReady
			_, err := rpcapi.NodeRegister.Call(c.ctx, c.rpc, &structs.NodeRegisterRequest{Node: node})
			if err == nil || c.ctx.Err() != nil {
				if err == nil {
					c.logger.Info("node updated on the servers")
				}
				break
			}
			c.logger.Warn("node update failed; retrying", "error", err, "attempt", attempt)
			timer := time.NewTimer(backoff(c.retryBase, c.retryMax, attempt, c.jitter))
			select {
			case <-c.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}
