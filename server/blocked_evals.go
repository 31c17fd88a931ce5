package server

import (
	"sync"

	"github.com/drover-io/drover/structs"
)

// blockedEvals holds evaluations whose placements failed until node
// capacity may have changed, then hands them back to the eval broker.
type blockedEvals struct {
	enqueue func(*structs.Evaluation)

	mu          sync.Mutex // guards the fields below
	enabled     bool
	blocked     map[string]*structs.Evaluation
	lastUnblock uint64 // raft index of the last capacity change
}

func newBlockedEvals(enqueue func(*structs.Evaluation)) *blockedEvals {
	return &blockedEvals{enqueue: enqueue, blocked: map[string]*structs.Evaluation{}}
}

// SetEnabled turns tracking on or off; turning it off drops everything.
func (b *blockedEvals) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = on
	if !on {
		b.blocked = map[string]*structs.Evaluation{}
		b.lastUnblock = 0
	}
}

// Block tracks a blocked evaluation. One computed on a snapshot older than
// the last capacity change is enqueued at once: it missed that change.
func (b *blockedEvals) Block(e *structs.Evaluation) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	if e.SnapshotIndex < b.lastUnblock {
		b.mu.Unlock()
		b.enqueue(e)
		return
	}
	b.blocked[e.ID] = e
	b.mu.Unlock()
}

// Untrack forgets an evaluation (it was cancelled or completed).
func (b *blockedEvals) Untrack(evalID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.blocked, evalID)
}

// Unblock enqueues every blocked evaluation: capacity changed at index.
func (b *blockedEvals) Unblock(index uint64) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	if index > b.lastUnblock {
		b.lastUnblock = index
	}
	evals := make([]*structs.Evaluation, 0, len(b.blocked))
	for _, e := range b.blocked {
		evals = append(evals, e)
	}
	b.blocked = map[string]*structs.Evaluation{}
	b.mu.Unlock()
	for _, e := range evals {
		b.enqueue(e)
	}
}

// Len returns the number of blocked evaluations.
func (b *blockedEvals) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.blocked)
}
