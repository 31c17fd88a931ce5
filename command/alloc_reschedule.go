package command

import (
	"fmt"
	"time"

	"github.com/drover-io/drover/api"
)

// rescheduleInfo returns the `alloc status` lines about rescheduling: the
// attempts used within the policy's interval, the allocation this one
// replaced and the one that replaced it, and when a failed allocation
// becomes eligible to be replaced (from its follow-up evaluation).
func rescheduleInfo(a *api.Allocation, followup *api.Evaluation, now time.Time, verbose bool) []kv {
	var out []kv
	if a.RescheduleTracker != nil && len(a.RescheduleTracker.Events) > 0 {
		out = append(out, kv{"Reschedule Attempts", rescheduleAttempts(a, now)})
		if a.PreviousAllocation != "" {
			out = append(out, kv{"Rescheduled Alloc ID", shortID(a.PreviousAllocation, verbose)})
		}
	}
	if a.NextAllocation != "" {
		out = append(out, kv{"Replacement Alloc ID", shortID(a.NextAllocation, verbose)})
	}
	if a.FollowupEvalID != "" && followup != nil && !followup.WaitUntil.IsZero() {
		out = append(out, kv{"Reschedule Eligibility", timeAgo(followup.WaitUntil, now)})
	}
	return out
}

// rescheduleAttempts renders "N/M": the reschedules within the policy's
// interval out of the attempts it allows ("N/unlimited" without a limit).
func rescheduleAttempts(a *api.Allocation, now time.Time) string {
	events := a.RescheduleTracker.Events
	p := groupReschedulePolicy(a)
	if p == nil {
		return fmt.Sprintf("%d", len(events))
	}
	if p.Unlimited != nil && *p.Unlimited {
		return fmt.Sprintf("%d/unlimited", len(events))
	}
	var interval time.Duration
	if p.Interval != nil {
		interval = *p.Interval
	}
	n := 0
	for _, e := range events {
		if now.Sub(time.Unix(0, e.RescheduleTime)) <= interval {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, derefInt(p.Attempts))
}

// groupReschedulePolicy returns the reschedule policy of the allocation's
// group in its job, or nil.
func groupReschedulePolicy(a *api.Allocation) *api.ReschedulePolicy {
	if a.Job == nil {
		return nil
	}
	for _, tg := range a.Job.TaskGroups {
		if tg != nil && derefString(tg.Name) == a.TaskGroup {
			return tg.ReschedulePolicy
		}
	}
	return nil
}
