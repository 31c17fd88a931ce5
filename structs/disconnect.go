package structs

import "time"

// AllocClientStatusUnknown is the client status of an allocation whose node
// is disconnected: it may still run, but nobody can tell (the group's
// disconnect block).
const AllocClientStatusUnknown = "unknown"

// Reconcile strategies of the disconnect block: which of an allocation and
// its replacement stays when the disconnected node comes back.
const (
	ReconcileBestScore       = "best_score"
	ReconcileKeepOriginal    = "keep_original"
	ReconcileKeepReplacement = "keep_replacement"
	ReconcileLongestRunning  = "longest_running"
)

// DisconnectStrategy is a group's disconnect block (or the older
// max_client_disconnect): how long its allocations may stay on a node the
// servers cannot reach before they are lost, and what happens meanwhile.
type DisconnectStrategy struct {
	// LostAfter is how long the node may stay unreachable (after its
	// heartbeat TTL and grace) with the allocations "unknown" before they
	// are lost. 0: lost at once, as without the block.
	LostAfter time.Duration
	// Replace places a replacement while the allocation is unknown.
	Replace bool
	// Reconcile picks which of the original and its replacement keeps
	// running when the node comes back.
	Reconcile string
	// StopOnClientAfter is how long the client keeps the tasks running
	// without reaching a server before it stops them on its own.
	StopOnClientAfter time.Duration
}

// Copy returns a copy of d.
func (d *DisconnectStrategy) Copy() *DisconnectStrategy {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}
