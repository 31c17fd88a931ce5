package client

import (
	"context"
	"runtime"
)

// DefaultMaxParallelStarts is how many tasks a node starts at once by
// default: four per CPU, at least 16. Starting a task is CPU work and
// short waits (a shim process is executed and initialises; its spec and
// state are synced to disk), so a few per CPU keep the CPUs busy while
// some wait; starting hundreds at once makes each of them slow without
// starting the last one sooner (1,000 at once on 2 CPUs ran past the
// drivers' start timeout, and the load average reached 600).
func DefaultMaxParallelStarts() int { return max(16, 4*runtime.NumCPU()) }

// startGate is the client's taskrunner.StartGate: a counting semaphore of
// task starts, handed out in the order they were asked for.
type startGate chan struct{}

// newStartGate returns a gate of n turns (DefaultMaxParallelStarts when
// n <= 0).
func newStartGate(n int) startGate {
	if n <= 0 {
		n = DefaultMaxParallelStarts()
	}
	return make(startGate, n)
}

// Enter waits for a turn or for ctx to be done.
func (g startGate) Enter(ctx context.Context) (leave func(), err error) {
	select {
	case g <- struct{}{}:
		return func() { <-g }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
