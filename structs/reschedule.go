package structs

import "time"

// Reschedule delay functions: how the wait before a failed allocation is
// replaced grows with each attempt.
const (
	DelayFunctionConstant    = "constant"
	DelayFunctionExponential = "exponential"
	DelayFunctionFibonacci   = "fibonacci"
)

// ReschedulePolicy says when an allocation that failed on its client is
// replaced by a new one, possibly on another node. A nil policy never
// reschedules.
type ReschedulePolicy struct {
	// Attempts is how many reschedules are allowed within Interval.
	Attempts int
	// Interval is the sliding window in which Attempts are counted.
	Interval time.Duration
	// Delay is the wait before the first reschedule.
	Delay time.Duration
	// DelayFunction is one of the DelayFunction constants.
	DelayFunction string
	// MaxDelay caps the delay (0: no cap).
	MaxDelay time.Duration
	// Unlimited allows any number of reschedules; Attempts and Interval
	// are ignored.
	Unlimited bool
}

// DefaultReschedulePolicy returns Nomad's default policy for a job type;
// nil for system jobs, which are never rescheduled.
func DefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	switch jobType {
	case JobTypeService:
		return &ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: DelayFunctionExponential, MaxDelay: time.Hour, Unlimited: true}
	case JobTypeBatch:
		return &ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: DelayFunctionConstant}
	}
	return nil
}

// Copy returns a copy of the policy.
func (p *ReschedulePolicy) Copy() *ReschedulePolicy {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Enabled reports whether the policy allows any reschedule.
func (p *ReschedulePolicy) Enabled() bool {
	return p != nil && (p.Unlimited || (p.Attempts > 0 && p.Interval > 0))
}

// RescheduleEvent records one reschedule of an allocation's lineage.
type RescheduleEvent struct {
	// RescheduleTime is when the replacement was placed, in Unix nanoseconds.
	RescheduleTime int64
	// PrevAllocID is the failed allocation that was replaced.
	PrevAllocID string
	// PrevNodeID is the node the failed allocation ran on.
	PrevNodeID string
	// Delay is the wait that preceded this reschedule.
	Delay time.Duration
}

// RescheduleTracker is the reschedule history an allocation inherits from
// the allocations it replaced, oldest first.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// Copy returns a deep copy of the tracker.
func (t *RescheduleTracker) Copy() *RescheduleTracker {
	if t == nil {
		return nil
	}
	c := &RescheduleTracker{Events: make([]*RescheduleEvent, len(t.Events))}
	for i, e := range t.Events {
		ec := *e
		c.Events[i] = &ec
	}
	return c
}

// lastEvent returns the tracker's newest event, or nil.
func (t *RescheduleTracker) lastEvent() *RescheduleEvent {
	if t == nil || len(t.Events) == 0 {
		return nil
	}
	return t.Events[len(t.Events)-1]
}

// NextDelay returns the wait before the next reschedule of an allocation
// whose history is tracker, under policy p.
func (p *ReschedulePolicy) NextDelay(tracker *RescheduleTracker) time.Duration {
	if p == nil {
		return 0
	}
	var d time.Duration
	last := tracker.lastEvent()
	switch {
	case last == nil:
		d = p.Delay
	case p.DelayFunction == DelayFunctionExponential:
		d = last.Delay * 2
	case p.DelayFunction == DelayFunctionFibonacci:
		if n := len(tracker.Events); n >= 2 {
			d = last.Delay + tracker.Events[n-2].Delay
		} else {
			d = p.Delay
		}
	default:
		d = p.Delay
	}
	if d <= 0 {
		d = p.Delay
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
}

// AttemptsUsed counts the tracker's events within the policy's interval
// ending at now (Unix nanoseconds).
func (p *ReschedulePolicy) AttemptsUsed(tracker *RescheduleTracker, now int64) int {
	if p == nil || tracker == nil {
		return 0
	}
	if p.Unlimited {
		return len(tracker.Events)
	}
	n := 0
	for _, e := range tracker.Events {
		if now-e.RescheduleTime <= int64(p.Interval) {
			n++
		}
	}
	return n
}

// RescheduleEligible reports whether a failed allocation of this policy
// with history tracker may be rescheduled at now (Unix nanoseconds).
func (p *ReschedulePolicy) RescheduleEligible(tracker *RescheduleTracker, now int64) bool {
	if !p.Enabled() {
		return false
	}
	return p.Unlimited || p.AttemptsUsed(tracker, now) < p.Attempts
}

// LastEventTime returns the time the allocation failed: the newest
// FinishedAt of its task states, else its ModifyTime.
func (a *Allocation) LastEventTime() time.Time {
	var last time.Time
	for _, s := range a.TaskStates {
		if s != nil && s.FinishedAt.After(last) {
			last = s.FinishedAt
		}
	}
	if last.IsZero() {
		return time.Unix(0, a.ModifyTime)
	}
	return last
}

// ReschedulePolicy returns the policy of the allocation's group, or nil.
func (a *Allocation) ReschedulePolicy() *ReschedulePolicy {
	if a.Job == nil {
		return nil
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return nil
	}
	return tg.ReschedulePolicy
}

// NextRescheduleTime returns when the failed allocation becomes eligible
// for rescheduling and whether it is eligible at all at now.
func (a *Allocation) NextRescheduleTime(now time.Time) (time.Time, bool) {
	p := a.ReschedulePolicy()
	if a.ClientStatus != AllocClientStatusFailed || !p.RescheduleEligible(a.RescheduleTracker, now.UnixNano()) {
		return time.Time{}, false
	}
	return a.LastEventTime().Add(p.NextDelay(a.RescheduleTracker)), true
}
