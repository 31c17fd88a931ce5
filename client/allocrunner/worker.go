package allocrunner

import "sync"

// pokeWorker runs fn, one run at a time, each time it is poked, in a
// goroutine that exists only while there is work: pokes that arrive
// while fn runs are coalesced into one more run. An allocation runner
// has two (server updates, task state changes); with 1,000 allocations on
// a node, 2,000 goroutines parked for an event that rarely comes cost
// more memory (their stacks) than starting one when it comes.
//
// Pokes before start are remembered and run once started; after stop
// (which waits for a run in progress) none runs again.
type pokeWorker struct {
	fn func()

	mu                                 sync.Mutex // guards the fields below
	started, running, pending, stopped bool
	wg                                 sync.WaitGroup
}

func newPokeWorker(fn func()) *pokeWorker { return &pokeWorker{fn: fn} }

// start allows runs, and runs fn if it was poked before.
func (w *pokeWorker) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = true
	if w.pending {
		w.pending = false
		w.launchLocked()
	}
}

// poke asks for a run of fn without blocking.
func (w *pokeWorker) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stopped:
	case !w.started || w.running:
		w.pending = true
	default:
		w.launchLocked()
	}
}

// launchLocked starts the goroutine; w.mu is held.
func (w *pokeWorker) launchLocked() {
	w.running = true
	w.wg.Add(1)
	go w.loop()
}

func (w *pokeWorker) loop() {
	defer w.wg.Done()
	for {
		w.fn()
		w.mu.Lock()
		if !w.pending || w.stopped {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.pending = false
		w.mu.Unlock()
	}
}

// stop ends the runs: it waits for one in progress; later pokes are
// ignored.
func (w *pokeWorker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wg.Wait()
}
