package client

import (
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// AllocTaskStats returns the latest resource usage sample of each task of
// an allocation this node runs, by task name (nil for a task that does not
// run). The samples come from the task runners' stats hooks: no driver is
// called. An allocation this node does not run is a not-found error.
func (c *Client) AllocTaskStats(allocID string) (map[string]*drivers.TaskResourceUsage, error) {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return nil, err
	}
	if ar.IsDestroyed() {
		return nil, structs.NewError(structs.KindNotFound, "allocation %s was garbage collected on this node", allocID)
	}
	return ar.TaskStats(), nil
}

// HostStats samples the host: CPU use since the previous call (and the
// MHz it amounts to, from the node's fingerprinted CPU speed), memory, the
// file system of the alloc directories and uptime. Parts that cannot be
// read are nil, and named in the error.
func (c *Client) HostStats() (*stats.HostStats, error) {
	hs, err := c.hostStats.Collect()
	if hs != nil {
		c.nodeMu.RLock()
		if nr := c.node.NodeResources; nr != nil {
			hs.CPUTicksConsumed = hs.TicksConsumed(nr.Cpu.CpuShares)
		}
		c.nodeMu.RUnlock()
	}
	return hs, err
}
