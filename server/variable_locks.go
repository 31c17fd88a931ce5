package server

import (
	"fmt"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// Variable locks (Nomad's var lock). A lock is part of its variable in
// the replicated state (VariableMetadata.Lock): taking and releasing it
// are raft writes. Its TTL is kept by the leader only, in memory: one
// timer per held lock, reset by each renewal (which writes nothing). A
// timer that fires has the leader release the lock through raft and
// refuse to give it again for the lock's delay. A new leader starts a full
// TTL for every lock it finds in the state, so a lock outlives a failover
// by at most one TTL.

// varKey names a variable.
type varKey struct{ namespace, path string }

// heldLock is a lock the leader times.
type heldLock struct {
	id    string
	delay time.Duration
	timer Timer
}

// varLocks keeps the leader's lock timers. A timer that fires records its
// lock as expired; the server's expiry loop then releases it.
type varLocks struct {
	clock   Clock
	notifyC chan struct{} // signalled (non-blocking) when expired grows

	mu      sync.Mutex // guards the fields below
	held    map[varKey]*heldLock
	expired map[varKey]string // lock IDs
	// delayed holds, for a lock that expired, until when it may not be
	// taken again.
	delayed map[varKey]time.Time
}

func newVarLocks(clock Clock) *varLocks {
	return &varLocks{clock: clock, notifyC: make(chan struct{}, 1),
		held: map[varKey]*heldLock{}, expired: map[varKey]string{}, delayed: map[varKey]time.Time{}}
}

// hold (re)starts the TTL of lock id on k.
func (l *varLocks) hold(k varKey, id string, ttl, delay time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.expired, k)
	if h, ok := l.held[k]; ok {
		h.timer.Stop()
	}
	h := &heldLock{id: id, delay: delay}
	h.timer = l.clock.AfterFunc(ttl, func() { l.fire(k, h) })
	l.held[k] = h
}

// release forgets lock id on k (it was released).
func (l *varLocks) release(k varKey, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.held[k]; ok && h.id == id {
		h.timer.Stop()
		delete(l.held, k)
	}
}

func (l *varLocks) fire(k varKey, h *heldLock) {
	l.mu.Lock()
	if l.held[k] != h {
		l.mu.Unlock()
		return // renewed or released since
	}
	delete(l.held, k)
	l.expired[k] = h.id
	if h.delay > 0 {
		l.delayed[k] = l.clock.Now().Add(h.delay)
	}
	l.mu.Unlock()
	select {
	case l.notifyC <- struct{}{}:
	default:
	}
}

// takeExpired returns and forgets the locks whose TTL passed.
func (l *varLocks) takeExpired() map[varKey]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.expired
	l.expired = map[varKey]string{}
	return out
}

// delayedUntil returns until when k's lock may not be taken (it expired
// less than its delay ago); the zero time when it may.
func (l *varLocks) delayedUntil(k varKey) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.delayed[k]
	if ok && !l.clock.Now().Before(until) {
		delete(l.delayed, k)
		return time.Time{}
	}
	return until
}

// stopAll stops every timer and forgets every delay (leadership lost, or
// shutdown).
func (l *varLocks) stopAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, h := range l.held {
		h.timer.Stop()
		delete(l.held, k)
	}
	l.expired = map[varKey]string{}
	l.delayed = map[varKey]time.Time{}
}

// runVarLockExpiry releases, on the leader, the locks whose TTL passed.
func (s *Server) runVarLockExpiry() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.varLocks.notifyC:
		}
		for k, id := range s.varLocks.takeExpired() {
			if !s.leader() {
				continue
			}
			cmd := &VarLockCommand{Op: varLockRelease, Namespace: k.namespace, Path: k.path, Lock: &structs.VariableLock{ID: id}}
			if _, _, err := s.raftApply(VarLockRequestType, cmd); err != nil {
				s.logger.Error("release expired variable lock", "namespace", k.namespace, "path", k.path, "error", err)
				continue
			}
			s.logger.Info("variable lock expired", "namespace", k.namespace, "path", k.path)
		}
	}
}

// restoreVarLocks starts, on a new leader, a full TTL for every lock held
// in the state.
func (s *Server) restoreVarLocks() error {
	vars, err := s.fsm.State().Variables(nil, "*", "")
	if err != nil {
		return fmt.Errorf("read variable locks: %w", err)
	}
	for _, v := range vars {
		if v.Lock == nil {
			continue
		}
		ttl, delay, err := v.Lock.LockDurations()
		if err != nil {
			ttl, delay = structs.DefaultVariableLockTTL, structs.DefaultVariableLockDelay
		}
		s.varLocks.hold(varKey{v.Namespace, v.Path}, v.Lock.ID, ttl, delay)
	}
	return nil
}
