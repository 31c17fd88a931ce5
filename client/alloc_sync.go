package client

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// allocUpdater is the AllocRunners' StateUpdater: it queues their updates.
type allocUpdater struct{ c *Client }

// AllocStateUpdated queues the update; it never blocks.
func (u allocUpdater) AllocStateUpdated(update *structs.Allocation) { u.c.queueUpdate(update) }

// queueUpdate keeps the latest update per allocation until the next batch.
func (c *Client) queueUpdate(update *structs.Allocation) {
	if update.NodeID == "" {
		update.NodeID = c.NodeID()
	}
	c.updatesMu.Lock()
	defer c.updatesMu.Unlock()
	c.pending[update.ID] = update
}

// syncLoop sends the queued updates every updateInterval.
func (c *Client) syncLoop() {
	defer c.wg.Done()
	ticker := time.NewTicker(c.updateInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-ticker.C:
			c.flushUpdates(c.ctx)
		}
	}
}

// flushUpdates sends the queued updates in one NodeUpdateAlloc. On failure
// they are queued again, unless a newer update for the alloc arrived.
func (c *Client) flushUpdates(ctx context.Context) {
	c.updatesMu.Lock()
	batch := c.pending
	c.pending = make(map[string]*structs.Allocation)
	c.updatesMu.Unlock()
	if len(batch) == 0 {
		return
	}
	list := make([]*structs.Allocation, 0, len(batch))
	for _, a := range batch {
		list = append(list, &structs.Allocation{
			ID:                a.ID,
			NodeID:            a.NodeID,
			ClientStatus:      a.ClientStatus,
			ClientDescription: a.ClientDescription,
			TaskStates:        a.TaskStates,
			DeploymentStatus:  a.DeploymentStatus,
		})
	}
	slices.SortFunc(list, func(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) })
	sent := time.Now()
	_, err := rpcapi.NodeUpdateAlloc.Call(ctx, c.rpc, &structs.AllocUpdateRequest{NodeID: c.NodeID(), SecretID: c.secretID(), Alloc: list})
	if err == nil {
		for _, a := range list {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				c.timeline.MarkAt(a.ID, structs.StepStatusSent, sent)
			}
		}
		return
	}
	c.logger.Warn("sending alloc updates failed; will retry", "error", err, "count", len(list))
	c.updatesMu.Lock()
	defer c.updatesMu.Unlock()
	for id, a := range batch {
		if _, newer := c.pending[id]; !newer {
			c.pending[id] = a
		}
	}
}
