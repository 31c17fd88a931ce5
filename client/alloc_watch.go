package client

import (
	"slices"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// allocDiff is what changed between the allocations the client runs and
// those the servers assign to it.
type allocDiff struct {
	added   []string // new to the client
	updated []string // AllocModifyIndex increased
	removed []string // no longer assigned (garbage collected by the servers)
}

// diffAllocs compares the AllocModifyIndex the client last applied per
// alloc with the servers' view. It is pure; the lists are sorted.
func diffAllocs(known, server map[string]uint64) allocDiff {
	var d allocDiff
	for id, idx := range server {
		cur, ok := known[id]
		switch {
		case !ok:
			d.added = append(d.added, id)
		case idx > cur:
			d.updated = append(d.updated, id)
		}
	}
	for id := range known {
		if _, ok := server[id]; !ok {
			d.removed = append(d.removed, id)
		}
	}
	slices.Sort(d.added)
	slices.Sort(d.updated)
	slices.Sort(d.removed)
	return d
}

// watchAllocations runs a blocking query for the node's allocations,
// fetches those that changed, and applies the diff, until the client stops.
func (c *Client) watchAllocations() {
	defer c.wg.Done()
	select {
	case <-c.registered:
	case <-c.ctx.Done():
		return
	}
	var index uint64
	failures := 0
	for {
		if failures > 0 {
			timer := time.NewTimer(backoff(c.retryBase, c.retryMax, failures, c.jitter))
			select {
			case <-c.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		resp, err := rpcapi.NodeGetClientAllocs.Call(c.ctx, c.rpc, &structs.NodeSpecificRequest{
			NodeID:   c.NodeID(),
			SecretID: c.secretID(),
			QueryOptions: structs.QueryOptions{
				Region: c.region, MinQueryIndex: index, MaxQueryTime: c.watchWait,
			},
		})
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			c.logger.Warn("watching allocations failed", "error", err, "failures", failures)
			continue
		}
		c.allocMu.RLock()
		diff := diffAllocs(c.known, resp.Allocs)
		c.allocMu.RUnlock()

		pull := append(slices.Clone(diff.added), diff.updated...)
		var fetched []*structs.Allocation
		if len(pull) > 0 {
			got, err := rpcapi.AllocGetAllocs.Call(c.ctx, c.rpc, &structs.AllocsGetRequest{
				AllocIDs:     pull,
				QueryOptions: structs.QueryOptions{Region: c.region, MinQueryIndex: resp.Index - 1},
			})
			if c.ctx.Err() != nil {
				return
			}
			if err != nil {
				failures++
				c.logger.Warn("fetching allocations failed", "error", err, "failures", failures)
				continue
			}
			fetched = got.Allocs
		}
		failures = 0
		c.applyAllocs(diff, fetched)
		// Never 0: a MinQueryIndex of 0 does not block, and would spin.
		index = max(resp.Index, 1)
		c.statsMu.Lock()
		c.allocIndex = index
		c.statsMu.Unlock()
	}
}

// applyAllocs starts runners for added allocations, hands updates to
// existing ones and destroys removed ones in the background. It never
// waits on an AllocRunner, nor on the disk: each new runner persists its
// allocation itself, first thing in Run, concurrently with the others
// (the StateDB group-commits their writes).
func (c *Client) applyAllocs(diff allocDiff, fetched []*structs.Allocation) {
	var toDestroy []*allocrunner.AllocRunner
	c.allocMu.Lock()
	for _, id := range diff.removed {
		if ar, ok := c.allocs[id]; ok {
			toDestroy = append(toDestroy, ar)
		}
		delete(c.allocs, id)
		delete(c.known, id)
	}
	var toStart []*allocrunner.AllocRunner
	received := time.Now()
	for _, alloc := range fetched {
		if alloc == nil {
			continue
		}
		if ar, ok := c.allocs[alloc.ID]; ok {
			c.known[alloc.ID] = alloc.AllocModifyIndex
			if alloc.ServerTerminalStatus() {
				c.timeline.MarkAt(alloc.ID, structs.StepStopReceived, received)
			}
			if c.serialUpdates {
				ar.ApplyUpdate(alloc)
			} else {
				ar.Update(alloc)
			}
			continue
		}
		c.known[alloc.ID] = alloc.AllocModifyIndex
		c.timeline.MarkAt(alloc.ID, structs.StepAllocReceived, received)
		if alloc.ClientTerminalStatus() {
			// Finished here before (its runner was garbage collected, or
			// the local state lost): never run it again.
			continue
		}
		ar, err := c.newAllocRunner(alloc)
		if err != nil {
			c.logger.Error("could not run allocation", "alloc_id", alloc.ID, "error", err)
			c.queueUpdate(&structs.Allocation{
				ID: alloc.ID, NodeID: alloc.NodeID,
				ClientStatus: structs.AllocClientStatusFailed, ClientDescription: err.Error(),
			})
			continue
		}
		c.allocs[alloc.ID] = ar
		toStart = append(toStart, ar)
	}
	c.allocMu.Unlock()

	for _, ar := range toStart {
		go ar.Run()
	}
	for _, ar := range toDestroy {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			ar.Destroy()
		}()
	}
}
