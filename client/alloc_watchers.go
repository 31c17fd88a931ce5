package client

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// remoteAllocWait bounds one blocking query of a remote watcher: below the
// network RPC client's per-call timeout, so a long wait is not an error.
const remoteAllocWait = 10 * time.Second

// watchers returns the watchers of alloc's previous and preempted
// allocations. c.allocs must be locked by the caller (or not yet shared).
func (c *Client) watchers(alloc *structs.Allocation) (prev, preempted allocrunner.PrevAllocWatcher) {
	if alloc.PreviousAllocation == "" && len(alloc.PreemptedAllocations) == 0 {
		return nil, nil
	}
	cfg := allocwatcher.Config{
		Alloc:      alloc,
		Servers:    serverLookup{c},
		NodeID:     c.NodeID(),
		Logger:     c.logger,
		HTTPClient: c.agentHTTP,
	}
	if ar, ok := c.allocs[alloc.PreviousAllocation]; ok {
		cfg.PreviousRunner = ar.WatchedRunner()
	}
	if n := len(alloc.PreemptedAllocations); n > 0 {
		cfg.PreemptedRunners = make(map[string]allocwatcher.AllocRunnerMeta, n)
		for _, id := range alloc.PreemptedAllocations {
			if ar, ok := c.allocs[id]; ok {
				cfg.PreemptedRunners[id] = ar.WatchedRunner()
			}
		}
	}
	return allocwatcher.NewAllocWatcher(cfg), allocwatcher.NewPreemptedAllocWatcher(cfg)
}

// serverLookup implements allocwatcher.ServerLookup with the client's RPC.
type serverLookup struct{ c *Client }

// AllocByID is a blocking query for one allocation.
func (s serverLookup) AllocByID(ctx context.Context, allocID string, minIndex uint64) (*structs.Allocation, uint64, error) {
	resp, err := rpcapi.AllocGetAllocs.Call(ctx, s.c.rpc, &structs.AllocsGetRequest{
		AllocIDs:     []string{allocID},
		QueryOptions: structs.QueryOptions{Region: s.c.region, MinQueryIndex: minIndex, MaxQueryTime: min(s.c.watchWait, remoteAllocWait)},
	})
	if err != nil {
		return nil, 0, fmt.Errorf("look up alloc %s: %w", allocID, err)
	}
	for _, a := range resp.Allocs {
		if a != nil && a.ID == allocID {
			return a, resp.Index, nil
		}
	}
	return nil, resp.Index, nil
}

// NodeHTTPAddr returns a node's HTTP address.
func (s serverLookup) NodeHTTPAddr(ctx context.Context, nodeID string) (string, error) {
	resp, err := rpcapi.NodeGet.Call(ctx, s.c.rpc, &structs.NodeSpecificRequest{NodeID: nodeID, QueryOptions: structs.QueryOptions{Region: s.c.region}})
	if err != nil {
		return "", fmt.Errorf("look up node %s: %w", nodeID, err)
	}
	if resp.Node == nil || resp.Node.HTTPAddr == "" {
		return "", structs.NewError(structs.KindNotFound, "node %s has no HTTP address", nodeID)
	}
	return s.c.agentScheme + "://" + resp.Node.HTTPAddr, nil
}
