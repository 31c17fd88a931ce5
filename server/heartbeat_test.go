package server

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
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
	if d <= 0 {
		// Due now: runs at once, as time.AfterFunc's does, not at the
		// next Advance.
		go f()
		return &fakeTimer{c: c, at: c.now, f: f}
	}
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

// Step advances the clock by d once every goroutine of the test's
// synctest bubble is blocked, and returns when they are blocked again:
// the server has done all it could at the old time (every timer it means
// to set is set, and runs when due) and all that the new time brings.
// Advance alone races a goroutine that reads Now and then arms its timer:
// a timer armed after the advance is due d too late. Only in a bubble.
func (c *fakeClock) Step(d time.Duration) {
	synctest.Wait()
	c.Advance(d)
	synctest.Wait()
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
		h := newHeartbeats(clock, 2*time.Second) // fires after TTL + 2s grace
		h.Reset("a", 8*time.Second)
		h.Reset("b", 8*time.Second)
		h.Reset("c", 8*time.Second)
		h.Clear("c")
		clock.Advance(6 * time.Second)
		h.Reset("a", 8*time.Second) // heard from a
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
		h.Reset("d", time.Second)
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
		s := newTestServer(t, func(c *Config) {
			c.Clock = clock
			c.HeartbeatTTL = time.Minute
			c.HeartbeatGrace = 10 * time.Second
		})
		ttl := registerNode(t, s, testNode("n1", 1000, 1000)).HeartbeatTTL
		if ttl < time.Minute || ttl > time.Minute+15*time.Second {
			t.Fatalf("TTL = %v, want the minimum plus at most a quarter", ttl)
		}
		clock.Advance(ttl + 9*time.Second) // past the TTL, within the grace
		if n, _ := s.State().NodeByID(nil, "n1"); n.Status != "ready" {
			t.Fatalf("status = %s before the TTL and grace", n.Status)
		}
		clock.Advance(time.Second)
		waitState(t, s, "node down", func(ws memdb.WatchSet) (bool, string) {
			n, _ := s.State().NodeByID(ws, "n1")
			return n.Status == "down", n.Status
		})
		if n, _ := s.State().NodeByID(nil, "n1"); n.StatusUpdatedAt != clock.Now().Unix() {
			t.Fatalf("StatusUpdatedAt = %d", n.StatusUpdatedAt)
		}
	})
}

func TestScaledTTL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		min    time.Duration
		rate   float64
		nodes  int
		expect time.Duration
	}{
		{"no nodes", 10 * time.Second, 50, 0, 10 * time.Second},
		{"few nodes keep the minimum", 10 * time.Second, 50, 100, 10 * time.Second},
		{"at the rate", 10 * time.Second, 50, 500, 10 * time.Second},
		{"more nodes than the rate allows", 10 * time.Second, 50, 5000, 100 * time.Second},
		{"a lower rate", 10 * time.Second, 1, 30, 30 * time.Second},
		{"no rate limit", 10 * time.Second, 0, 1e6, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scaledTTL(tc.min, tc.rate, tc.nodes); got != tc.expect {
				t.Fatalf("scaledTTL(%v, %v, %d) = %v, want %v", tc.min, tc.rate, tc.nodes, got, tc.expect)
			}
		})
	}
}

// TestHeartbeatTTLGrowsWithNodes registers more nodes than the rate allows
// at the minimum TTL: the TTLs given grow, and a node is marked down only
// after the TTL it was given plus the grace.
func TestHeartbeatTTLGrowsWithNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) {
			c.Clock = clock
			c.HeartbeatTTL = time.Second
			c.MaxHeartbeatsPerSecond = 2
			c.HeartbeatGrace = 3 * time.Second
		})
		var last time.Duration
		for i := range 20 {
			last = registerNode(t, s, testNode(fmt.Sprintf("n%02d", i), 1000, 1000)).HeartbeatTTL
		}
		// 19 nodes known when the last registered: 19/2 = 9.5s, plus up
		// to a quarter as stagger.
		if last < 9500*time.Millisecond || last > 9500*time.Millisecond*5/4 {
			t.Fatalf("TTL of the 20th node = %v, want 9.5s to 11.875s", last)
		}
		clock.Advance(last + 3*time.Second - time.Millisecond)
		if n, _ := s.State().NodeByID(nil, "n19"); n.Status != structs.NodeStatusReady {
			t.Fatalf("n19 %s before its TTL and grace", n.Status)
		}
		clock.Advance(time.Millisecond)
		waitState(t, s, "n19 down", func(ws memdb.WatchSet) (bool, string) {
			n, _ := s.State().NodeByID(ws, "n19")
			return n.Status == structs.NodeStatusDown, n.Status
		})
	})
}
