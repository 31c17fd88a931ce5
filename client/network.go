package client

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/drover-io/drover/client/allocnet"
	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/plugins/drivers"
)

// cniFingerprintTimeout bounds asking every CNI plugin for its version.
const cniFingerprintTimeout = 30 * time.Second

// setupNetwork creates the manager of the allocations' bridge and CNI
// namespaces (cfg.Network; nil: none, and the node offers neither) and
// adds the CNI plugins and networks it finds to the node's attributes.
func (c *Client) setupNetwork(cfg *Config) error {
	if cfg.Network == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		c.logger.Info("the agent does not run as root: no bridge or CNI networking on this node")
		return nil
	}
	m, err := allocnet.New(*cfg.Network, c.logger.With("component", "allocnet"))
	if err != nil {
		return err
	}
	c.network = m
	ncfg := cfg.Network
	dirs := ncfg.PluginDirs
	if len(dirs) == 0 {
		dirs = allocnet.PluginDirs("")
	}
	confDir := ncfg.ConfigDir
	if confDir == "" {
		confDir = allocnet.DefaultConfigDir
	}
	ctx, cancel := context.WithTimeout(c.ctx, cniFingerprintTimeout)
	defer cancel()
	attrs := allocnet.Fingerprint(ctx, dirs, confDir)
	for k, v := range attrs {
		c.node.Attributes[k] = v
	}
	if _, ok := attrs[allocnet.PluginAttrPrefix+"bridge"]; !ok {
		c.logger.Warn("no CNI bridge plugin found: this node gets no bridge-mode allocations (install the CNI plugins, e.g. Debian's containernetworking-plugins, or set client cni_path)", "cni_path", dirs)
	}
	return nil
}

// sweepNetworks removes the network namespaces that belong to no
// allocation this agent restored, then what drivers made for such
// allocations (docker's infra containers): left by a crash while an
// allocation was being destroyed.
func (c *Client) sweepNetworks() {
	if c.network == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	known := func(id string) bool {
		_, ok := c.allocs[id]
		return ok
	}
	removed, err := c.network.Sweep(ctx, known)
	if len(removed) > 0 {
		c.logger.Info("removed network namespaces of allocations this agent does not run", "alloc_ids", removed)
	}
	if err != nil {
		c.logger.Error("could not remove network namespaces of allocations this agent does not run", "error", err)
	}
	for _, name := range slices.Sorted(maps.Keys(c.drivers.Drivers())) {
		d, err := c.drivers.Dispense(name)
		if err != nil {
			continue // not running here
		}
		if caps := d.Capabilities(); caps == nil || !caps.MustInitiateNetwork {
			continue
		}
		nm, ok := d.(drivers.DriverNetworkManager)
		if !ok {
			continue
		}
		if err := sweepDriverNetworks(ctx, nm, c.node.ID, known); err != nil {
			c.logger.Error("could not remove driver-made networks of allocations this agent does not run", "driver", name, "error", err)
		}
	}
}

// sweepDriverNetworks removes what nm made for allocations of node
// nodeID that known does not know.
func sweepDriverNetworks(ctx context.Context, nm drivers.DriverNetworkManager, nodeID string, known func(string) bool) error {
	ids, err := nm.Networks(ctx, nodeID)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if !known(id) {
			errs = append(errs, nm.DestroyNetwork(ctx, id))
		}
	}
	return errors.Join(errs...)
}

// allocNetwork returns the manager as the alloc runners take it: a nil
// interface when there is none.
func (c *Client) allocNetwork() allocrunner.NetworkManager {
	if c.network == nil {
		return nil
	}
	return c.network
}
