package structs

import "time"

// Evaluation statuses.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// What triggered an evaluation.
const (
	EvalTriggerJobRegister   = "job-register"
	EvalTriggerJobDeregister = "job-deregister"
	EvalTriggerNodeUpdate    = "node-update"
	EvalTriggerRetryFailed   = "failed-follow-up"
	EvalTriggerAllocStop     = "alloc-stop"
	EvalTriggerQueuedAllocs  = "queued-allocs"
	EvalTriggerPreemption    = "preemption"
	EvalTriggerAllocFailure  = "alloc-failure"
	EvalTriggerNodeDrain     = "node-drain"
)

// Evaluation is a request to reconcile a job's desired and actual state.
// The scheduler processes it and records the outcome in it: failed
// placements land in FailedTGAllocs, and a BlockedEval is created to retry
// them when resources change.
type Evaluation struct {
	ID              string
	Namespace       string
	Priority        int
	Type            string // the job's type
	TriggeredBy     string
	JobID           string
	JobModifyIndex  uint64
	NodeID          string
	NodeModifyIndex uint64
	// DeploymentID is the job's deployment the evaluation created or
	// worked on (Nomad's CLI follows it after `job run`), or the one whose
	// allocations' health triggered it.
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	// WaitUntil delays the evaluation: the broker hands it out no earlier
	// (a follow-up eval that reschedules failed allocations).
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	FailedTGAllocs    map[string]*AllocMetric
	QueuedAllocations map[string]int
	SnapshotIndex     uint64
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// TerminalStatus reports whether the evaluation has finished.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// Copy returns a copy of the evaluation.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	if e.FailedTGAllocs != nil {
		c.FailedTGAllocs = make(map[string]*AllocMetric, len(e.FailedTGAllocs))
		for k, v := range e.FailedTGAllocs {
			m := *v
			c.FailedTGAllocs[k] = &m
		}
	}
	if e.QueuedAllocations != nil {
		c.QueuedAllocations = make(map[string]int, len(e.QueuedAllocations))
		for k, v := range e.QueuedAllocations {
			c.QueuedAllocations[k] = v
		}
	}
	return &c
}
