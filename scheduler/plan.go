package scheduler

import (
	"sort"

	"github.com/drover-io/drover/structs"
)

// Plan is the outcome of processing an evaluation: allocations to stop and
// allocations to place, by node, plus the placements that failed.
type Plan struct {
	// EvalID is the evaluation the plan answers.
	EvalID string
	// Job is the job planned for; nil when it was purged.
	Job *structs.Job
	// NodeUpdate holds, by node, copies of existing allocations with
	// DesiredStatus stop and a DesiredDescription saying why.
	NodeUpdate map[string][]*structs.Allocation
	// NodeAllocation holds, by node, the allocations to place: new ones,
	// and in-place updates of existing ones (same ID, CreateIndex set) that
	// move them to the current job version without a restart elsewhere.
	NodeAllocation map[string][]*structs.Allocation
	// FailedTGAllocs explains, per group, the placements that failed; the
	// metric's CoalescedFailures counts the failures beyond the first.
	FailedTGAllocs map[string]*structs.AllocMetric
	// QueuedAllocations counts, per group, the placements not made.
	QueuedAllocations map[string]int
	// NodePreemptions holds, by node, copies of allocations of lower
	// priority jobs evicted to make room for the plan's placements
	// (DesiredStatus evict, PreemptedByAllocation set).
	NodePreemptions map[string][]*structs.Allocation
	// Deployments are the deployments to create or update: the job's
	// current rolling update, and earlier ones it cancels.
	Deployments []*structs.Deployment
	// Annotations count, per group, what the plan does.
	Annotations *structs.PlanAnnotations
	// AllocUpdates are copies of failed allocations annotated for
	// rescheduling: NextAllocation names their replacement in this plan
	// (commit only with it), or FollowupEvalID the evaluation that will
	// replace them. Their node's capacity is not involved.
	AllocUpdates []*structs.Allocation
	// FollowupEvals are evaluations to create that the broker holds until
	// their WaitUntil: they reschedule failed allocations once their
	// delay has passed.
	FollowupEvals []*structs.Evaluation
}

func newPlan(eval *structs.Evaluation, job *structs.Job) *Plan {
	return &Plan{
		EvalID:            eval.ID,
		Job:               job,
		NodeUpdate:        map[string][]*structs.Allocation{},
		NodeAllocation:    map[string][]*structs.Allocation{},
		NodePreemptions:   map[string][]*structs.Allocation{},
		QueuedAllocations: map[string]int{},
		Annotations:       &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}},
	}
}

// desired returns the annotation counts of group tg, creating them.
func (p *Plan) desired(tg string) *structs.DesiredUpdates {
	d, ok := p.Annotations.DesiredTGUpdates[tg]
	if !ok {
		d = &structs.DesiredUpdates{}
		p.Annotations.DesiredTGUpdates[tg] = d
	}
	return d
}

// AppendPreemption adds the eviction of alloc, preempted by the new
// allocation byID, to the plan; alloc itself is not changed.
func (p *Plan) AppendPreemption(alloc *structs.Allocation, byID string, now int64) {
	c := alloc.Copy()
	c.DesiredStatus = structs.AllocDesiredStatusEvict
	c.DesiredDescription = "Preempted by alloc " + byID
	c.PreemptedByAllocation = byID
	c.ModifyTime = now
	p.NodePreemptions[c.NodeID] = append(p.NodePreemptions[c.NodeID], c)
	p.Annotations.PreemptedAllocs = append(p.Annotations.PreemptedAllocs, c.Stub())
}

// Preemptions returns every preemption in the plan, ordered by node then
// allocation name.
func (p *Plan) Preemptions() []*structs.Allocation { return flatten(p.NodePreemptions) }

// IsNoOp reports whether the plan neither stops nor places anything.
func (p *Plan) IsNoOp() bool {
	return len(p.NodeUpdate) == 0 && len(p.NodeAllocation) == 0 && len(p.NodePreemptions) == 0 && len(p.Deployments) == 0 &&
		len(p.AllocUpdates) == 0 && len(p.FollowupEvals) == 0
}

// AppendStop adds a stop of alloc to the plan; alloc itself is not changed.
func (p *Plan) AppendStop(alloc *structs.Allocation, desc string, now int64) {
	c := alloc.Copy()
	c.DesiredStatus = structs.AllocDesiredStatusStop
	c.DesiredDescription = desc
	c.ModifyTime = now
	p.NodeUpdate[c.NodeID] = append(p.NodeUpdate[c.NodeID], c)
}

// AppendAlloc adds a new allocation to the plan.
func (p *Plan) AppendAlloc(alloc *structs.Allocation) {
	p.NodeAllocation[alloc.NodeID] = append(p.NodeAllocation[alloc.NodeID], alloc)
}

// Stops returns every stop in the plan, ordered by node then allocation ID.
func (p *Plan) Stops() []*structs.Allocation { return flatten(p.NodeUpdate) }

// Placements returns every placement in the plan, ordered by node then name.
func (p *Plan) Placements() []*structs.Allocation { return flatten(p.NodeAllocation) }

func flatten(m map[string][]*structs.Allocation) []*structs.Allocation {
	var out []*structs.Allocation
	for _, allocs := range m {
		out = append(out, allocs...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NodeID != out[j].NodeID {
			return out[i].NodeID < out[j].NodeID
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// failed records a failed placement of group tg explained by metric.
func (p *Plan) failed(tg string, metric *structs.AllocMetric) {
	p.QueuedAllocations[tg]++
	if p.FailedTGAllocs == nil {
		p.FailedTGAllocs = map[string]*structs.AllocMetric{}
	}
	if prev, ok := p.FailedTGAllocs[tg]; ok {
		prev.CoalescedFailures++
		return
	}
	p.FailedTGAllocs[tg] = metric
}
