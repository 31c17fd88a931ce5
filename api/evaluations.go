package api

import (
	"net/url"
	"sort"
	"time"
)

// Evaluation statuses.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// Evaluations is the evaluation endpoints of the API.
type Evaluations struct{ c *Client }

// Evaluations returns the evaluation endpoints.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{c: c} }

// Evaluation is a request to reconcile a job's desired and actual state,
// and, once processed, its outcome.
type Evaluation struct {
	ID              string
	Namespace       string
	Priority        int
	Type            string
	TriggeredBy     string
	JobID           string
	JobModifyIndex  uint64
	NodeID          string
	NodeModifyIndex uint64
	// DeploymentID is the job's deployment the evaluation created or
	// worked on.
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	// WaitUntil is when a delayed evaluation (a reschedule follow-up) runs.
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	FailedTGAllocs    map[string]*AllocationMetric
	QueuedAllocations map[string]int
	SnapshotIndex     uint64
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64 // Unix nanoseconds
	ModifyTime        int64 // Unix nanoseconds
}

// Terminal reports whether the evaluation has finished.
func (e *Evaluation) Terminal() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// AllocationMetric explains a placement, or why one failed: how many nodes
// were considered and why they were rejected.
type AllocationMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	Scores             map[string]float64
	AllocationTime     time.Duration
	CoalescedFailures  int
	// ScoreMetaData lists the best-scoring nodes of a placement, best
	// first, with each scorer's component.
	ScoreMetaData []*NodeScoreMeta `json:",omitempty"`
}

// NodeScoreMeta is how one node scored for a placement: by scorer
// ("binpack", "node-affinity", "allocation-spread", ...), and the final
// score the node was ranked by.
type NodeScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

// List returns the evaluations, newest first.
func (e *Evaluations) List(q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	var resp []*Evaluation
	qm, err := e.c.query("/v1/evaluations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sortEvals(resp)
	return resp, qm, nil
}

// Info returns one evaluation by its full ID.
func (e *Evaluations) Info(evalID string, q *QueryOptions) (*Evaluation, *QueryMeta, error) {
	var resp Evaluation
	qm, err := e.c.query("/v1/evaluation/"+url.PathEscape(evalID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Allocations returns the allocations the evaluation created or changed.
func (e *Evaluations) Allocations(evalID string, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	qm, err := e.c.query("/v1/evaluation/"+url.PathEscape(evalID)+"/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sortAllocStubs(resp)
	return resp, qm, nil
}

// sortEvals sorts newest first.
func sortEvals(s []*Evaluation) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].CreateIndex > s[j].CreateIndex })
}
