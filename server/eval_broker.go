package server

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/timeline"
)

// evalBroker queues evaluations for the workers. At most one evaluation per
// job is ready or in flight at a time; the job's others wait behind it, in
// the order they were enqueued. Ready evaluations are handed out by job
// priority, highest first, and in enqueue order among equal priorities.
// It only holds evaluations while enabled (on the leader). An evaluation
// whose WaitUntil is in the future (a follow-up that reschedules failed
// allocations) is held on a clock timer until then.
type evalBroker struct {
	wakeMu sync.Mutex    // guards wake
	wake   chan struct{} // closed (and replaced) when ready grows: wakes every waiting dequeue
	clock  Clock
	// timeline, when set, records each evaluation's enqueue and dequeue.
	timeline *timeline.Recorder
	// nackTimeout gives an evaluation in flight back to the queue when
	// its worker neither acknowledged it nor gave it back in time (a
	// worker on another server that died); 0: never.
	nackTimeout time.Duration

	mu       sync.Mutex // guards the fields below
	enabled  bool
	paused   bool                                           // the scheduler configuration's PauseEvalBroker: nothing is dequeued
	seq      uint64                                         // enqueue counter: FIFO among equal priorities
	ready    readyQueue                                     // their job has nothing else out
	waiting  map[structs.NamespacedID][]*structs.Evaluation // behind a ready or in-flight eval of their job
	busy     map[structs.NamespacedID]bool                  // job has an eval ready or in flight
	inflight map[string]*inflightEval                       // eval ID -> its dequeue
	requeue  map[string]*structs.Evaluation                 // re-enqueued while in flight
	queued   map[string]bool                                // eval IDs in ready, waiting or delayed
	delayed  map[string]Timer                               // eval ID -> timer releasing it at its WaitUntil
}

// inflightEval is a dequeued evaluation: the worker that holds it
// acknowledges it with its token.
type inflightEval struct {
	eval  *structs.Evaluation
	key   structs.NamespacedID
	token string
	nack  Timer // nil without a nack timeout
}

// newEvalBroker returns a disabled broker; clock (nil: the wall clock)
// times delayed evaluations.
func newEvalBroker(clock Clock) *evalBroker {
	if clock == nil {
		clock = realClock{}
	}
	b := &evalBroker{wake: make(chan struct{}), clock: clock}
	b.reset()
	return b
}

func (b *evalBroker) reset() {
	for _, t := range b.delayed {
		t.Stop()
	}
	for _, in := range b.inflight {
		if in.nack != nil {
			in.nack.Stop()
		}
	}
	b.delayed = map[string]Timer{}
	b.ready = nil
	b.waiting = map[structs.NamespacedID][]*structs.Evaluation{}
	b.busy = map[structs.NamespacedID]bool{}
	b.inflight = map[string]*inflightEval{}
	b.requeue = map[string]*structs.Evaluation{}
	b.queued = map[string]bool{}
}

// SetNackTimeout sets the nack timeout of the evaluations dequeued from
// now on.
func (b *evalBroker) SetNackTimeout(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nackTimeout = d
}

// SetPaused pauses or resumes the handing out of evaluations (the
// scheduler configuration's PauseEvalBroker); enqueued ones wait.
func (b *evalBroker) SetPaused(paused bool) {
	b.mu.Lock()
	changed := b.paused != paused
	b.paused = paused
	b.mu.Unlock()
	if changed && !paused {
		b.notify()
	}
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
	b.wakeMu.Lock()
	close(b.wake)
	b.wake = make(chan struct{})
	b.wakeMu.Unlock()
}

// waitCh returns the channel the next notify closes.
func (b *evalBroker) waitCh() <-chan struct{} {
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	return b.wake
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
	b.timeline.Mark(e.ID, structs.StepEvalEnqueued)
	if b.busy[key] {
		b.waiting[key] = append(b.waiting[key], e)
		return
	}
	b.busy[key] = true
	b.pushReadyLocked(e)
}

// pushReadyLocked makes e ready; b.mu is held.
func (b *evalBroker) pushReadyLocked(e *structs.Evaluation) {
	b.seq++
	heap.Push(&b.ready, readyEval{eval: e, seq: b.seq})
	b.notify()
}

// Dequeue waits for an evaluation to process, until ctx is done: the
// ready one of highest priority, the oldest among equals.
func (b *evalBroker) Dequeue(ctx context.Context) (*structs.Evaluation, error) {
	e, _, err := b.DequeueToken(ctx, nil)
	return e, err
}

// DequeueToken is Dequeue that also returns the token that acknowledges
// the evaluation (AckToken, Nack); with types, only an evaluation of one
// of those scheduler types (its job's type) is dequeued.
func (b *evalBroker) DequeueToken(ctx context.Context, types []string) (*structs.Evaluation, string, error) {
	for {
		// The wake channel is taken before ready is looked at: an
		// evaluation enqueued after the look closes it.
		wake := b.waitCh()
		b.mu.Lock()
		if i := b.ready.best(types); i >= 0 && !b.paused {
			e := heap.Remove(&b.ready, i).(readyEval).eval
			delete(b.queued, e.ID)
			in := &inflightEval{eval: e, key: structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}, token: structs.GenerateUUID()}
			if b.nackTimeout > 0 {
				token := in.token
				in.nack = b.clock.AfterFunc(b.nackTimeout, func() { _ = b.Nack(e.ID, token) })
			}
			b.inflight[e.ID] = in
			more := len(b.ready) > 0
			b.mu.Unlock()
			b.timeline.Mark(e.ID, structs.StepEvalDequeued)
			if more {
				b.notify() // wake another worker
			}
			return e, in.token, nil
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-wake:
		}
	}
}

// Ack marks an evaluation processed, whoever holds it; the next one of its
// job becomes ready.
func (b *evalBroker) Ack(evalID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if in, ok := b.inflight[evalID]; ok {
		b.ackLocked(in)
	}
}

// AckToken marks an evaluation processed by the worker holding token.
func (b *evalBroker) AckToken(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	in, err := b.heldLocked(evalID, token)
	if err != nil {
		return err
	}
	b.ackLocked(in)
	return nil
}

// Outstanding reports whether the worker holding token still holds the
// evaluation.
func (b *evalBroker) Outstanding(evalID, token string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.heldLocked(evalID, token)
	return err == nil
}

// Nack gives an evaluation back: it is ready again, before its job's
// others (its worker could not process it, or its nack timer fired).
func (b *evalBroker) Nack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	in, err := b.heldLocked(evalID, token)
	if err != nil {
		return err
	}
	if in.nack != nil {
		in.nack.Stop()
	}
	delete(b.inflight, evalID)
	e := in.eval
	if newer, ok := b.requeue[evalID]; ok {
		delete(b.requeue, evalID)
		e = newer
	}
	b.queued[e.ID] = true
	b.pushReadyLocked(e) // the job stays busy: this is its one ready eval
	return nil
}

// heldLocked returns the dequeue of evalID held with token; b.mu is held.
func (b *evalBroker) heldLocked(evalID, token string) (*inflightEval, error) {
	in, ok := b.inflight[evalID]
	if !ok || in.token != token {
		return nil, structs.NewError(structs.KindConflict,
			"evaluation %s is not held with this token: it was acknowledged, or given to another worker after its nack timeout", evalID)
	}
	return in, nil
}

// ackLocked completes a dequeue; b.mu is held.
func (b *evalBroker) ackLocked(in *inflightEval) {
	if in.nack != nil {
		in.nack.Stop()
	}
	evalID, key := in.eval.ID, in.key
	delete(b.inflight, evalID)
	if e, ok := b.requeue[evalID]; ok {
		delete(b.requeue, evalID)
		b.queued[e.ID] = true
		b.waiting[key] = append(b.waiting[key], e)
	}
	b.promoteLocked(key)
}

// promoteLocked makes the next waiting evaluation of a job with nothing
// ready or in flight ready; b.mu is held.
func (b *evalBroker) promoteLocked(key structs.NamespacedID) {
	next := b.waiting[key]
	if len(next) == 0 {
		delete(b.waiting, key)
		delete(b.busy, key)
		return
	}
	if len(next) == 1 {
		delete(b.waiting, key)
	} else {
		b.waiting[key] = next[1:]
	}
	b.pushReadyLocked(next[0])
}

// Remove drops a queued evaluation that became terminal (a worker
// cancelled it: its pass covered it); one in flight is left alone.
func (b *evalBroker) Remove(e *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.requeue, e.ID)
	if !b.queued[e.ID] {
		return
	}
	delete(b.queued, e.ID)
	if t, ok := b.delayed[e.ID]; ok {
		t.Stop()
		delete(b.delayed, e.ID)
		return
	}
	key := structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
	if w := b.waiting[key]; len(w) > 0 {
		if i := slices.IndexFunc(w, func(x *structs.Evaluation) bool { return x.ID == e.ID }); i >= 0 {
			w = slices.Delete(w, i, i+1)
			if len(w) == 0 {
				delete(b.waiting, key)
			} else {
				b.waiting[key] = w
			}
			return
		}
	}
	if i := slices.IndexFunc(b.ready, func(r readyEval) bool { return r.eval.ID == e.ID }); i >= 0 {
		heap.Remove(&b.ready, i)
		b.promoteLocked(key)
	}
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

// readyEval is a ready evaluation with its enqueue sequence number.
type readyEval struct {
	eval *structs.Evaluation
	seq  uint64
}

// readyQueue is a heap of ready evaluations: highest priority first, then
// lowest sequence number (FIFO).
type readyQueue []readyEval

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	if q[i].eval.Priority != q[j].eval.Priority {
		return q[i].eval.Priority > q[j].eval.Priority
	}
	return q[i].seq < q[j].seq
}
func (q readyQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// best returns the index of the evaluation to dequeue first among those
// of the given types (all with none), -1 when there is none.
func (q readyQueue) best(types []string) int {
	if len(q) == 0 {
		return -1
	}
	if len(types) == 0 {
		return 0 // the heap's top
	}
	best := -1
	for i, r := range q {
		if slices.Contains(types, r.eval.Type) && (best < 0 || q.Less(i, best)) {
			best = i
		}
	}
	return best
}
func (q *readyQueue) Push(x any) { *q = append(*q, x.(readyEval)) }
func (q *readyQueue) Pop() any {
	old := *q
	n := len(old)
	x := old[n-1]
	old[n-1] = readyEval{}
	*q = old[:n-1]
	return x
}
