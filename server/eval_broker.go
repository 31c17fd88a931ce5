package server

import (
	"context"
	"sync"

	"github.com/drover-io/drover/structs"
)

// evalBroker queues evaluations for the workers. Evaluations of one job are
// handed out one at a time, in the order they were enqueued; different jobs
// proceed in parallel. It only holds evaluations while enabled (on the
// leader). An evaluation whose WaitUntil is in the future (a follow-up that
// reschedules failed allocations) is held on a clock timer until then.
type evalBroker struct {
	readyCh chan struct{} // signalled (non-blocking) when ready grows
	clock   Clock

	mu       sync.Mutex // guards the fields below
	enabled  bool
	ready    []*structs.Evaluation                          // their job has nothing else out
	waiting  map[structs.NamespacedID][]*structs.Evaluation // behind a ready or in-flight eval of their job
	busy     map[structs.NamespacedID]bool                  // job has an eval ready or in flight
	inflight map[string]structs.NamespacedID                // eval ID -> job
	requeue  map[string]*structs.Evaluation                 // re-enqueued while in flight
	queued   map[string]bool                                // eval IDs in ready, waiting or delayed
	delayed  map[string]Timer                               // eval ID -> timer releasing it at its WaitUntil
}

// newEvalBroker returns a disabled broker; clock (nil: the wall clock)
// times delayed evaluations.
func newEvalBroker(clock Clock) *evalBroker {
	if clock == nil {
		clock = realClock{}
	}
	b := &evalBroker{readyCh: make(chan struct{}, 1), clock: clock}
	b.reset()
	return b
}

func (b *evalBroker) reset() {
	for _, t := range b.delayed {
		t.Stop()
	}
	b.delayed = map[string]Timer{}
	b.ready = nil
	b.waiting = map[structs.NamespacedID][]*structs.Evaluation{}
	b.busy = map[structs.NamespacedID]bool{}
	b.inflight = map[string]structs.NamespacedID{}
	b.requeue = map[string]*structs.Evaluation{}
	b.queued = map[string]bool{}
}

// SetEnabled turns the broker on or off; turning it off drops everything.
func (b *evalBroker) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = on
	if !on {
		b.reset()
	}
}

func (b *evalBroker) notify() {
	select {
	case b.readyCh <- struct{}{}:
	default:
	}
}

// Enqueue adds an evaluation. Duplicates of a queued one are ignored; one
// that is in flight is queued again once acknowledged.
func (b *evalBroker) Enqueue(e *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled || b.queued[e.ID] {
		return
	}
	if _, ok := b.inflight[e.ID]; ok {
		b.requeue[e.ID] = e
		return
	}
	if wait := e.WaitUntil.Sub(b.clock.Now()); !e.WaitUntil.IsZero() && wait > 0 {
		b.queued[e.ID] = true
		b.delayed[e.ID] = b.clock.AfterFunc(wait, func() { b.release(e) })
		return
	}
	b.enqueueLocked(e)
}

// release moves a delayed evaluation whose time has come to the queue.
func (b *evalBroker) release(e *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.delayed[e.ID]; !ok || !b.enabled {
		return
	}
	delete(b.delayed, e.ID)
	delete(b.queued, e.ID)
	b.enqueueLocked(e)
}

// enqueueLocked queues e behind its job's other evaluations; b.mu is held.
func (b *evalBroker) enqueueLocked(e *structs.Evaluation) {
	key := structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
	b.queued[e.ID] = true
	if b.busy[key] {
		b.waiting[key] = append(b.waiting[key], e)
		return
	}
	b.busy[key] = true
	b.ready = append(b.ready, e)
	b.notify()
}

// Dequeue waits for an evaluation to process, until ctx is done.
func (b *evalBroker) Dequeue(ctx context.Context) (*structs.Evaluation, error) {
	for {
		b.mu.Lock()
		if len(b.ready) > 0 {
			e := b.ready[0]
			b.ready[0] = nil
			b.ready = b.ready[1:]
			delete(b.queued, e.ID)
			b.inflight[e.ID] = structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
			more := len(b.ready) > 0
			b.mu.Unlock()
			if more {
				b.notify() // wake another worker
			}
			return e, nil
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.readyCh:
		}
	}
}

// Ack marks an evaluation processed; the next one of its job becomes ready.
func (b *evalBroker) Ack(evalID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key, ok := b.inflight[evalID]
	if !ok {
		return
	}
	delete(b.inflight, evalID)
	if e, ok := b.requeue[evalID]; ok {
		delete(b.requeue, evalID)
		b.queued[e.ID] = true
		b.waiting[key] = append(b.waiting[key], e)
	}
	next := b.waiting[key]
	if len(next) == 0 {
		delete(b.waiting, key)
		delete(b.busy, key)
		return
	}
	b.ready = append(b.ready, next[0])
	if len(next) == 1 {
		delete(b.waiting, key)
	} else {
		b.waiting[key] = next[1:]
	}
	b.notify()
}

// brokerStats counts the broker's evaluations.
type brokerStats struct {
	Ready, Waiting, InFlight, Delayed int
}

func (b *evalBroker) Stats() brokerStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := brokerStats{Ready: len(b.ready), InFlight: len(b.inflight), Delayed: len(b.delayed)}
	for _, w := range b.waiting {
		s.Waiting += len(w)
	}
	return s
}
