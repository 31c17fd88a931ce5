package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

func ev(id, job string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, Namespace: "default", JobID: job, Status: structs.EvalStatusPending}
}

func dequeueNow(t *testing.T, b *evalBroker) *structs.Evaluation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	e, err := b.Dequeue(ctx)
	if err != nil {
		t.Fatalf("dequeue: %v", err)
	}
	return e
}

func assertEmpty(t *testing.T, b *evalBroker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if e, err := b.Dequeue(ctx); err == nil {
		t.Fatalf("dequeued %s, want nothing", e.ID)
	}
}

func TestEvalBrokerSerializesPerJob(t *testing.T) {
	b := newEvalBroker(nil)
	b.SetEnabled(true)
	b.Enqueue(ev("a1", "a"))
	b.Enqueue(ev("a2", "a"))
	b.Enqueue(ev("b1", "b"))
	b.Enqueue(ev("a1", "a")) // duplicate: ignored

	if e := dequeueNow(t, b); e.ID != "a1" {
		t.Fatalf("first = %s", e.ID)
	}
	if e := dequeueNow(t, b); e.ID != "b1" {
		t.Fatalf("second = %s (a2 must wait for a1)", e.ID)
	}
	assertEmpty(t, b)
	b.Ack("a1")
	if e := dequeueNow(t, b); e.ID != "a2" {
		t.Fatalf("third = %s", e.ID)
	}
	if s := b.Stats(); s.InFlight != 2 || s.Ready != 0 {
		t.Fatalf("stats = %+v", s)
	}
	// Re-enqueued while in flight: handed out again after the ack.
	b.Enqueue(ev("b1", "b"))
	assertEmpty(t, b)
	b.Ack("b1")
	if e := dequeueNow(t, b); e.ID != "b1" {
		t.Fatalf("requeued = %s", e.ID)
	}
}

func TestEvalBrokerDisabled(t *testing.T) {
	b := newEvalBroker(nil)
	b.Enqueue(ev("x", "a"))
	assertEmpty(t, b)
	b.SetEnabled(true)
	b.Enqueue(ev("y", "a"))
	b.SetEnabled(false)
	b.SetEnabled(true)
	assertEmpty(t, b)
}

func TestBlockedEvals(t *testing.T) {
	var got []string
	bl := newBlockedEvals(func(e *structs.Evaluation) { got = append(got, e.ID) })
	bl.Block(&structs.Evaluation{ID: "ignored"}) // disabled
	bl.SetEnabled(true)
	bl.Block(&structs.Evaluation{ID: "b1", SnapshotIndex: 10})
	bl.Block(&structs.Evaluation{ID: "b2", SnapshotIndex: 10})
	bl.Untrack("b2")
	if bl.Len() != 1 || len(got) != 0 {
		t.Fatalf("len %d, enqueued %v", bl.Len(), got)
	}
	bl.Unblock(20)
	if len(got) != 1 || got[0] != "b1" || bl.Len() != 0 {
		t.Fatalf("after unblock: %v, len %d", got, bl.Len())
	}
	// Computed before the last capacity change: enqueued at once.
	bl.Block(&structs.Evaluation{ID: "b3", SnapshotIndex: 15})
	if len(got) != 2 || got[1] != "b3" {
		t.Fatalf("missed unblock not caught: %v", got)
	}
	bl.Block(&structs.Evaluation{ID: "b4", SnapshotIndex: 25})
	if bl.Len() != 1 {
		t.Fatalf("len = %d", bl.Len())
	}
}

func TestEvalBrokerDelaysUntilWaitUntil(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	b := newEvalBroker(clock)
	b.SetEnabled(true)
	later := ev("later", "a")
	later.WaitUntil = clock.Now().Add(30 * time.Second)
	past := ev("past", "b")
	past.WaitUntil = clock.Now().Add(-time.Second)
	b.Enqueue(later)
	b.Enqueue(later) // duplicate while delayed: ignored
	b.Enqueue(past)
	if e := dequeueNow(t, b); e.ID != "past" {
		t.Fatalf("first = %s, want the eval whose time has passed", e.ID)
	}
	if s := b.Stats(); s.Delayed != 1 {
		t.Fatalf("stats = %+v, want 1 delayed", s)
	}
	assertEmpty(t, b)
	clock.Advance(29 * time.Second)
	assertEmpty(t, b)
	clock.Advance(time.Second)
	if e := dequeueNow(t, b); e.ID != "later" {
		t.Fatalf("released = %s", e.ID)
	}
	if s := b.Stats(); s.Delayed != 0 {
		t.Fatalf("stats = %+v, want none delayed", s)
	}

	// Disabling drops delayed evaluations and stops their timers.
	gone := ev("gone", "c")
	gone.WaitUntil = clock.Now().Add(time.Minute)
	b.Enqueue(gone)
	b.SetEnabled(false)
	b.SetEnabled(true)
	clock.Advance(time.Hour)
	assertEmpty(t, b)
}

func evp(id, job string, priority int) *structs.Evaluation {
	e := ev(id, job)
	e.Priority = priority
	return e
}

// TestEvalBrokerPriorityOrder: ready evaluations go out by priority, then
// in enqueue order; a job's own evaluations still wait for its one in
// flight, whatever their priority.
func TestEvalBrokerPriorityOrder(t *testing.T) {
	b := newEvalBroker(nil)
	b.SetEnabled(true)
	b.Enqueue(evp("low1", "a", 20))
	b.Enqueue(evp("mid1", "b", 50))
	b.Enqueue(evp("mid2", "c", 50))
	b.Enqueue(evp("high", "d", 90))
	b.Enqueue(evp("d-next", "d", 100)) // behind "high", its job's
	b.Enqueue(evp("mid3", "e", 50))

	var got []string
	for range 5 {
		got = append(got, dequeueNow(t, b).ID)
	}
	want := []string{"high", "mid1", "mid2", "mid3", "low1"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	assertEmpty(t, b)
	b.Ack("high")
	if e := dequeueNow(t, b); e.ID != "d-next" {
		t.Fatalf("after ack = %s, want d-next", e.ID)
	}
}

// TestEvalBrokerRemove: a queued evaluation that became terminal leaves
// the broker; when it was its job's ready one, the next of the job is
// promoted.
func TestEvalBrokerRemove(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	b := newEvalBroker(clock)
	b.SetEnabled(true)
	b.Enqueue(ev("a1", "a"))
	b.Enqueue(ev("a2", "a"))
	b.Enqueue(ev("a3", "a"))
	delayed := ev("d1", "d")
	delayed.WaitUntil = clock.Now().Add(time.Minute)
	b.Enqueue(delayed)

	b.Remove(ev("a2", "a")) // waiting
	b.Remove(ev("a1", "a")) // ready: a3 takes its place
	b.Remove(delayed)
	if s := b.Stats(); s.Ready != 1 || s.Waiting != 0 || s.Delayed != 0 {
		t.Fatalf("stats = %+v", s)
	}
	if e := dequeueNow(t, b); e.ID != "a3" {
		t.Fatalf("dequeued %s, want a3", e.ID)
	}
	b.Remove(ev("a3", "a")) // in flight: left alone
	if s := b.Stats(); s.InFlight != 1 {
		t.Fatalf("stats = %+v", s)
	}
	clock.Advance(time.Hour)
	assertEmpty(t, b)
	b.Ack("a3")
	b.Enqueue(ev("a4", "a"))
	if e := dequeueNow(t, b); e.ID != "a4" {
		t.Fatalf("dequeued %s, want a4", e.ID)
	}
}
