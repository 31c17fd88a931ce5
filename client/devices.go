package client

import (
	"context"
	"time"

	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// deviceStartTimeout bounds the device manager's start (configuration and
// first fingerprints).
const deviceStartTimeout = time.Minute

// newDeviceManager builds the device manager from the config; nil when the
// agent configured no device plugins.
func (c *Client) newDeviceManager(cfg *Config) *devicemanager.Manager {
	if cfg.DeviceManager == nil {
		return nil
	}
	dm := *cfg.DeviceManager
	dm.Logger = c.logger.With("component", "devicemanager")
	dm.UpdateNode = c.UpdateNodeFromDevices
	dm.State = c.stateDB
	return devicemanager.New(dm)
}

// startDevices starts the device manager; the devices of its first
// fingerprints are in the node when it returns.
func (c *Client) startDevices() error {
	if c.devices == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deviceStartTimeout)
	defer cancel()
	return c.devices.Start(ctx)
}

// shutdownDevices stops the device plugins.
func (c *Client) shutdownDevices() {
	if c.devices != nil {
		c.devices.Shutdown()
	}
}

// DeviceManager returns the client's device manager; nil without device
// plugins.
func (c *Client) DeviceManager() *devicemanager.Manager { return c.devices }

// deviceReserver is what task runners reserve devices with: the device
// manager, or nil (an untyped nil, so that the hook sees none) without one.
func (c *Client) deviceReserver() interface {
	Reserve(context.Context, *structs.AllocatedDeviceResource) (*device.ContainerReservation, error)
} {
	if c.devices == nil {
		return nil
	}
	return c.devices
}

// UpdateNodeFromDevices records the node's device groups
// (NodeResources.Devices) and, after registration, sends the servers the
// new node.
func (c *Client) UpdateNodeFromDevices(devices []*structs.NodeDeviceResource) {
	c.updateNode(func(n *structs.Node) {
		if n.NodeResources == nil {
			n.NodeResources = &structs.NodeResources{}
		}
		n.NodeResources.Devices = devices
	})
	c.signalNodeChanged()
}

// HostDeviceStats returns the latest statistics of every device of the
// node; nil without device plugins.
func (c *Client) HostDeviceStats() []*device.DeviceGroupStats {
	if c.devices == nil {
		return nil
	}
	return c.devices.AllStats()
}

// TaskDeviceStats returns the latest statistics of the device instances
// the allocation gave each of its tasks, by task name, one group per
// allocated group. The lookup costs the task's own instances (the device
// manager indexes statistics by instance ID), not the node's devices.
func (c *Client) TaskDeviceStats(alloc *structs.Allocation) map[string][]*device.DeviceGroupStats {
	if c.devices == nil || alloc == nil || alloc.AllocatedResources == nil {
		return nil
	}
	out := map[string][]*device.DeviceGroupStats{}
	for task, tr := range alloc.AllocatedResources.Tasks {
		if tr == nil {
			continue
		}
		for _, d := range tr.Devices {
			if st := c.devices.InstanceStats(d); st != nil {
				out[task] = append(out[task], st)
			}
		}
	}
	return out
}
