package timeline

import (
	"slices"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// DefaultLimit is how many IDs a Recorder made by New(0, ...) remembers.
const DefaultLimit = 4096

// steps holds one ID's step times in Unix nanoseconds, 0 for a step not
// reached, indexed by structs.TimelineStep.
type steps [structs.NumTimelineSteps]int64

// Recorder keeps the first time each step was reached, per ID (an
// evaluation's or an allocation's), for its most recent IDs. Its methods
// are safe for concurrent use, and a nil *Recorder records nothing.
type Recorder struct {
	now   func() time.Time
	limit int

	mu   sync.Mutex // guards the fields below
	byID map[string]*steps
	// ring holds the IDs in the order they were first marked; once it
	// holds limit IDs, ring[next] is the oldest, the next one forgotten.
	ring []string
	next int
}

// New returns a Recorder that remembers the steps of its limit most
// recently marked IDs (DefaultLimit when limit <= 0); now (nil: time.Now)
// times Mark.
func New(limit int, now func() time.Time) *Recorder {
	if limit <= 0 {
		limit = DefaultLimit
	}
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now, limit: limit, byID: make(map[string]*steps)}
}

// Mark records that id reached step now, unless it reached it before.
func (r *Recorder) Mark(id string, step structs.TimelineStep) {
	if r == nil {
		return
	}
	r.MarkAt(id, step, r.now())
}

// MarkAt records that id reached step at t, unless it reached it before.
// An empty id, an unknown step and a zero t are ignored.
func (r *Recorder) MarkAt(id string, step structs.TimelineStep, t time.Time) {
	if r == nil || id == "" || step == 0 || step >= structs.NumTimelineSteps || t.IsZero() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil {
		s = new(steps)
		if len(r.ring) < r.limit {
			r.ring = append(r.ring, id)
		} else {
			delete(r.byID, r.ring[r.next])
			r.ring[r.next] = id
			r.next = (r.next + 1) % r.limit
		}
		r.byID[id] = s
	}
	if s[step] == 0 {
		s[step] = t.UnixNano()
	}
}

// Entries returns the steps id reached, in step order; nil when none is
// remembered.
func (r *Recorder) Entries(id string) []structs.TimelineEntry {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s == nil {
		return nil
	}
	var out []structs.TimelineEntry
	for step, t := range s {
		if t != 0 {
			out = append(out, structs.TimelineEntry{Step: structs.TimelineStep(step), Time: t})
		}
	}
	return out
}

// Merge returns the entries of several parts of one timeline in step
// order; where two parts hold the same step, the earlier time is kept.
func Merge(parts ...[]structs.TimelineEntry) []structs.TimelineEntry {
	var all steps
	for _, p := range parts {
		for _, e := range p {
			if e.Step == 0 || e.Step >= structs.NumTimelineSteps || e.Time == 0 {
				continue
			}
			if cur := all[e.Step]; cur == 0 || e.Time < cur {
				all[e.Step] = e.Time
			}
		}
	}
	var out []structs.TimelineEntry
	for step, t := range all {
		if t != 0 {
			out = append(out, structs.TimelineEntry{Step: structs.TimelineStep(step), Time: t})
		}
	}
	return slices.Clip(out)
}
