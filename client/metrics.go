package client

import (
	"maps"
	"slices"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/structs"
)

// restoreStats is how the restore of the earlier run's allocations went.
type restoreStats struct {
	Duration time.Duration
	Allocs   int
}

// RestoreStats returns how long New took to restore the allocations of
// the agent's earlier run from the state file, and how many it restored
// (0 and 0 on a fresh node).
func (c *Client) RestoreStats() (time.Duration, int) {
	return c.restored.Duration, c.restored.Allocs
}

// AllocMetric is one allocation this node runs, as the agent's telemetry
// counts it.
type AllocMetric struct {
	// Alloc is the server-sent allocation (read-only).
	Alloc *structs.Allocation
	// ClientStatus is the allocation's status on this node.
	ClientStatus string
	// TaskStates are the tasks' states ("pending", "running", "dead"), in
	// the group's task order.
	TaskStates []allocrunner.TaskStatus
}

// AllocMetrics returns every allocation this node runs (and has not
// garbage collected) with its client status. It calls no driver.
func (c *Client) AllocMetrics() []AllocMetric {
	c.allocMu.RLock()
	runners := slices.Collect(maps.Values(c.allocs))
	c.allocMu.RUnlock()
	out := make([]AllocMetric, 0, len(runners))
	// One backing array for every alloc's task states.
	tasks := make([]allocrunner.TaskStatus, 0, len(runners))
	for _, ar := range runners {
		if ar.IsDestroyed() {
			continue
		}
		start := len(tasks)
		var status string
		status, tasks = ar.StatusSummary(tasks)
		out = append(out, AllocMetric{Alloc: ar.Alloc(), ClientStatus: status, TaskStates: tasks[start:len(tasks):len(tasks)]})
	}
	return out
}
