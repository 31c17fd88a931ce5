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

// queueUpdate keeps the latest update per allocation until the next
// batch, and wakes the sync loop.
func (c *Client) queueUpdate(update *structs.Allocation) {
	if update.NodeID == "" {
		update.NodeID = c.NodeID()
	}
	if update.ClientTerminalStatus() {
		c.timeline.Mark(update.ID, structs.StepEnded)
	}
	c.updatesMu.Lock()
	c.pending[update.ID] = update
	c.updatesMu.Unlock()
	c.signalQueued()
}

// signalQueued tells the sync loop that updates are queued.
func (c *Client) signalQueued() {
	select {
	case c.queued <- struct{}{}:
	default:
	}
}

// syncLoop sends the queued updates. An update queued while the loop is
// idle is sent at once; those queued while a batch is being sent, or
// within updateInterval of the last batch's start, go together in the
// next batch, sent as soon as that interval has passed. A lone state
// change (a task now running) thus reaches the servers without waiting,
// and under load at most one batch per updateInterval leaves, holding
// every allocation's latest state. A batch that failed is queued again
// and retried after a backoff.
func (c *Client) syncLoop() {
	defer c.wg.Done()
	var last time.Time // when the latest batch was sent
	failures := 0
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.queued:
		}
		wait := c.updateInterval - time.Since(last)
		if failures > 0 {
			wait = max(wait, backoff(c.retryBase, c.retryMax, failures, c.jitter)-time.Since(last))
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-c.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		last = time.Now()
		if c.flushUpdates(c.ctx) {
			failures = 0
			continue
		}
		failures++
		c.signalQueued() // the batch is queued again
	}
}

// flushUpdates sends the queued updates in one NodeUpdateAlloc and reports
// whether that worked (or nothing was queued). On failure they are queued
// again, unless a newer update for the alloc arrived.
func (c *Client) flushUpdates(ctx context.Context) bool {
	c.updatesMu.Lock()
	batch := c.pending
	c.pending = make(map[string]*structs.Allocation)
	c.updatesMu.Unlock()
	if len(batch) == 0 {
		return true
	}
	list := make([]*structs.Allocation, 0, len(batch))
	for _, a := range batch {
		list = append(list, &structs.Allocation{
			ID:                a.ID,
			NodeID:            a.NodeID,
			ClientStatus:      a.ClientStatus,
			ClientDescription: a.ClientDescription,
			TaskStates:        a.TaskStates,
			DeploymentID:      a.DeploymentID, // the deployment DeploymentStatus is for
			DeploymentStatus:  a.DeploymentStatus,
			NetworkStatus:     a.NetworkStatus,
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
		return true
	}
	c.logger.Warn("sending alloc updates failed; will retry", "error", err, "count", len(list))
	c.updatesMu.Lock()
	defer c.updatesMu.Unlock()
	for id, a := range batch {
		if _, newer := c.pending[id]; !newer {
			c.pending[id] = a
		}
	}
	return false
}
