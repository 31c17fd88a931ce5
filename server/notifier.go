package server

import (
	"context"
	"sync"
)

// notifier wakes every waiter at once: wait returns a channel that the
// next notify closes. A waiter takes the channel, checks its condition,
// then waits on the channel, so that no notify between the check and the
// wait is missed.
type notifier struct {
	mu sync.Mutex // guards ch
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

// wait returns the channel the next notify closes.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

// notify wakes every waiter.
func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.ch)
	n.ch = make(chan struct{})
}

// waitForIndex waits until the state store holds every raft entry up to
// index (a worker schedules on state at least as new as the leader's when
// it handed out the evaluation), or ctx ends.
func (s *Server) waitForIndex(ctx context.Context, index uint64) error {
	for {
		ch := s.indexNotify.wait()
		if s.fsm.State().LatestIndex() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
