package server

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeClock is a Clock whose timers fire only when Advance passes them.
type fakeClock struct {
	mu     sync.Mutex // guards the fields below
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	at     time.Time
	f      func()
	active bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves time on and runs the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if t.active && !t.at.After(c.now) {
			t.active = false
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.now.Add(d), true
	return was
}

func TestHeartbeatTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		h := newHeartbeats(clock, 10*time.Second)
		h.Reset("a")
		h.Reset("b")
		h.Reset("c")
		h.Clear("c")
		clock.Advance(6 * time.Second)
		h.Reset("a") // heard from a
		clock.Advance(6 * time.Second)
		if got := h.takeExpired(); len(got) != 1 || got[0] != "b" {
			t.Fatalf("expired = %v, want [b]", got)
		}
		select {
		case <-h.notifyC:
		default:
			t.Fatal("expiry not signalled")
		}
		if h.Len() != 1 || !h.Active("a") || h.Active("b") {
			t.Fatalf("timers = %d", h.Len())
		}
		clock.Advance(5 * time.Second)
		if got := h.takeExpired(); len(got) != 1 || got[0] != "a" {
			t.Fatalf("expired = %v, want [a]", got)
		}
		h.Reset("d")
		h.StopAll()
		clock.Advance(time.Minute)
		if got := h.takeExpired(); len(got) != 0 || h.Len() != 0 {
			t.Fatalf("after StopAll: expired %v, %d timers", got, h.Len())
		}
	})
}

func TestHeartbeatWithInjectedClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = time.Minute })
		registerNode(t, s, testNode("n1", 1000, 1000))
		clock.Advance(30 * time.Second)
		if n, _ := s.State().NodeByID(nil, "n1"); n.Status != "ready" {
			t.Fatalf("status = %s before the TTL", n.Status)
		}
		clock.Advance(31 * time.Second)
		waitFor(t, "node down", func() (bool, string) {
			n, _ := s.State().NodeByID(nil, "n1")
			return n.Status == "down", n.Status
		})
		if n, _ := s.State().NodeByID(nil, "n1"); n.StatusUpdatedAt != clock.Now().Unix() {
			t.Fatalf("StatusUpdatedAt = %d", n.StatusUpdatedAt)
		}
	})
}
