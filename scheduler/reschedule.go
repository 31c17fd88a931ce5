package scheduler

import (
	"sort"
	"time"

	"github.com/drover-io/drover/structs"
)

// rescheduleWindow is how early a failed allocation may be replaced: one
// whose reschedule time is at most this far ahead counts as due, so that a
// follow-up evaluation released on time never misses by clock jitter.
const rescheduleWindow = time.Second

// nodeReschedulePenalty is subtracted from the score of the nodes a
// rescheduled allocation already failed on, so that another feasible node
// wins while the same node stays usable when it is the only one.
const nodeReschedulePenalty = 1.0

// rescheduleKind is what to do with a failed allocation.
type rescheduleKind int

const (
	// rescheduleNone: the policy does not allow it; the allocation stays.
	rescheduleNone rescheduleKind = iota
	// rescheduleNow: its delay has passed; replace it in this plan.
	rescheduleNow
	// rescheduleLater: replace it when a follow-up evaluation runs.
	rescheduleLater
)

// rescheduleDecision classifies a, an allocation the server still wants
// running, under the policy of tg. It returns when a becomes due and the
// delay that precedes its reschedule.
func (r *run) rescheduleDecision(tg *structs.TaskGroup, a *structs.Allocation) (rescheduleKind, time.Time, time.Duration) {
	if a.ClientStatus != structs.AllocClientStatusFailed || a.NextAllocation != "" ||
		r.job.Type == structs.JobTypeSystem || r.job.Type == structs.JobTypeSysBatch {
		return rescheduleNone, time.Time{}, 0
	}
	if f := a.DesiredTransition.ForceReschedule; f != nil && *f {
		// `job eval -force-reschedule`: now, whatever the policy says.
		return rescheduleNow, r.nowTime(), 0
	}
	p := tg.ReschedulePolicy
	if !p.RescheduleEligible(a.RescheduleTracker, r.now) {
		return rescheduleNone, time.Time{}, 0
	}
	delay := p.NextDelay(a.RescheduleTracker)
	at := a.LastEventTime().Add(delay)
	if !at.After(r.nowTime().Add(rescheduleWindow)) {
		return rescheduleNow, at, delay
	}
	return rescheduleLater, at, delay
}

// rescheduleLater records that failed allocation a is to be replaced at
// at: unless a follow-up evaluation is already pending for it, one is
// created (shared by the allocations due at the same time) and a is
// annotated with its ID.
func (r *run) rescheduleLater(a *structs.Allocation, at time.Time) {
	if a.FollowupEvalID != "" && a.FollowupEvalID != r.eval.ID {
		return
	}
	var eval *structs.Evaluation
	for _, e := range r.plan.FollowupEvals {
		if e.WaitUntil.Equal(at) {
			eval = e
			break
		}
	}
	if eval == nil {
		eval = &structs.Evaluation{
			ID:             r.newEvalID(),
			Namespace:      r.job.Namespace,
			Priority:       r.job.Priority,
			Type:           r.job.Type,
			TriggeredBy:    structs.EvalTriggerAllocFailure,
			JobID:          r.job.ID,
			JobModifyIndex: r.job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			PreviousEval:   r.eval.ID,
			WaitUntil:      at,
			CreateTime:     r.now,
			ModifyTime:     r.now,
		}
		r.plan.FollowupEvals = append(r.plan.FollowupEvals, eval)
		sort.Slice(r.plan.FollowupEvals, func(i, j int) bool {
			return r.plan.FollowupEvals[i].WaitUntil.Before(r.plan.FollowupEvals[j].WaitUntil)
		})
	}
	c := a.Copy()
	c.FollowupEvalID = eval.ID
	c.ModifyTime = r.now
	r.plan.AllocUpdates = append(r.plan.AllocUpdates, c)
}

// rescheduledFrom completes the placement a that replaces the failed
// allocation prev: a inherits prev's reschedule history plus this
// reschedule, and prev is annotated with a's ID.
func (r *run) rescheduledFrom(a, prev *structs.Allocation, delay time.Duration) {
	t := prev.RescheduleTracker.Copy()
	if t == nil {
		t = &structs.RescheduleTracker{}
	}
	t.Events = append(t.Events, &structs.RescheduleEvent{
		RescheduleTime: r.now, PrevAllocID: prev.ID, PrevNodeID: prev.NodeID, Delay: delay,
	})
	a.RescheduleTracker = t
	c := prev.Copy()
	c.NextAllocation = a.ID
	c.ModifyTime = r.now
	r.plan.AllocUpdates = append(r.plan.AllocUpdates, c)
}

// penalizedNodes returns the nodes that prev's lineage failed on, when
// prev is a failed allocation being rescheduled; nil otherwise.
func (r *run) penalizedNodes(prev *structs.Allocation) map[string]bool {
	if prev == nil {
		return nil
	}
	if _, ok := r.rescheduling[prev.ID]; !ok {
		return nil
	}
	out := map[string]bool{prev.NodeID: true}
	if prev.RescheduleTracker != nil {
		for _, e := range prev.RescheduleTracker.Events {
			out[e.PrevNodeID] = true
		}
	}
	return out
}
