package state

import (
	"errors"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// groupCommitter runs writes in shared bbolt transactions, one fsync for
// many writers, without making any writer wait for company: a write that
// finds no commit in progress commits at once; writes that arrive while a
// commit runs queue up, and the first of them commits them all in one
// transaction as soon as that commit ends. A lone write thus costs one
// transaction and its fsync, and under load a batch is what queued during
// one fsync (bbolt's own Batch instead holds every write for a timer,
// whose wake-up a loaded machine delays).
//
// Every write is durable when write returns: its transaction committed
// (and synced). A write whose function fails gets that error alone: the
// others of its batch are committed again without it, so a function may
// run more than once and must be idempotent (as with bolt.DB.Batch).
type groupCommitter struct {
	// update runs a function in a write transaction and commits it
	// (bolt.DB.Update; tests give a fake).
	update func(func(*bolt.Tx) error) error

	mu sync.Mutex // guards the fields below
	// queue holds the writes waiting for the next commit.
	queue []*groupWrite
	// leading is true while some writer commits (or is handed the lead).
	leading bool
}

// groupWrite is one queued write and where its outcome goes.
type groupWrite struct {
	fn   func(*bolt.Tx) error
	done chan groupOutcome // buffered 1
}

// groupOutcome is a write's result, or (lead) the order to commit the
// queue.
type groupOutcome struct {
	err  error
	lead bool
}

func newGroupCommitter(db *bolt.DB) *groupCommitter { return &groupCommitter{update: db.Update} }

// write runs fn in a transaction, shared with the writes queued with it,
// and returns once that transaction committed (or failed).
func (g *groupCommitter) write(fn func(*bolt.Tx) error) error {
	w := &groupWrite{fn: fn, done: make(chan groupOutcome, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	if g.leading {
		g.mu.Unlock()
		out := <-w.done
		if !out.lead {
			return out.err
		}
		// The previous leader is done and handed the lead to w, still
		// queued.
	} else {
		g.leading = true
		g.mu.Unlock()
	}
	return g.lead(w)
}

// lead commits every queued write (w among them) in one transaction, then
// hands the lead to the first write queued meanwhile, or gives it up; it
// returns w's outcome.
func (g *groupCommitter) lead(w *groupWrite) error {
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	g.commit(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- groupOutcome{lead: true}
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return (<-w.done).err
}

// failedWrite is the error of a batch in which one write's function failed.
type failedWrite struct {
	index int
	err   error
}

func (f *failedWrite) Error() string { return f.err.Error() }

// commit runs the batch's functions in one transaction and delivers each
// write's outcome. When a function fails, it gets its error and the rest
// of the batch is committed again without it.
func (g *groupCommitter) commit(batch []*groupWrite) {
	for len(batch) > 0 {
		err := g.update(func(tx *bolt.Tx) error {
			for i, w := range batch {
				if err := w.fn(tx); err != nil {
					return &failedWrite{index: i, err: err}
				}
			}
			return nil
		})
		var failed *failedWrite
		if !errors.As(err, &failed) {
			// Committed, or the commit itself failed (a full disk, a
			// closed database): the same outcome for every write.
			for _, w := range batch {
				w.done <- groupOutcome{err: err}
			}
			return
		}
		batch[failed.index].done <- groupOutcome{err: failed.err}
		batch = append(batch[:failed.index:failed.index], batch[failed.index+1:]...)
	}
}
