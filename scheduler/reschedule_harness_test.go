package scheduler

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// parseReschedule builds the policy of a "reschedule" script command.
func parseReschedule(kv map[string]string) (*structs.ReschedulePolicy, error) {
	if len(kv) == 0 {
		return nil, nil
	}
	p := &structs.ReschedulePolicy{DelayFunction: structs.DelayFunctionConstant}
	for k, v := range kv {
		var err error
		switch k {
		case "attempts":
			p.Attempts = atoi(v)
		case "interval":
			p.Interval, err = time.ParseDuration(v)
		case "delay":
			p.Delay, err = time.ParseDuration(v)
		case "max":
			p.MaxDelay, err = time.ParseDuration(v)
		case "fn":
			p.DelayFunction = v
		case "unlimited":
			p.Unlimited = v == "true"
		default:
			return nil, fmt.Errorf("reschedule: unknown key %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("reschedule %s: %w", k, err)
		}
	}
	return p, nil
}

// rescheduleAllocOptions applies the rescheduling keys of an "alloc"
// script command to a.
func rescheduleAllocOptions(a *structs.Allocation, kv map[string]string) error {
	now := testOptions().Now()
	if v, ok := kv["failed"]; ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("alloc failed: %w", err)
		}
		a.ClientStatus = structs.AllocClientStatusFailed
		a.ModifyTime = now.Add(-d).UnixNano()
	}
	if v, ok := kv["tracker"]; ok {
		a.RescheduleTracker = &structs.RescheduleTracker{}
		for i, ev := range strings.Split(v, ",") {
			parts := strings.Split(ev, ":")
			if len(parts) != 3 {
				return fmt.Errorf("alloc tracker: want node:ago:delay, got %q", ev)
			}
			ago, err1 := time.ParseDuration(parts[1])
			delay, err2 := time.ParseDuration(parts[2])
			if err1 != nil || err2 != nil {
				return fmt.Errorf("alloc tracker %q: bad duration", ev)
			}
			a.RescheduleTracker.Events = append(a.RescheduleTracker.Events, &structs.RescheduleEvent{
				RescheduleTime: now.Add(-ago).UnixNano(), PrevAllocID: fmt.Sprintf("old-%d", i),
				PrevNodeID: parts[0], Delay: delay,
			})
		}
	}
	a.NextAllocation = kv["next"]
	a.FollowupEvalID = kv["followup"]
	return nil
}

// renderReschedule writes the plan's reschedule annotations and follow-up
// evaluations, times relative to the test clock.
func renderReschedule(b *strings.Builder, p *Plan) {
	now := testOptions().Now()
	for _, a := range p.AllocUpdates {
		switch {
		case a.NextAllocation != "":
			fmt.Fprintf(b, "rescheduled %s %s node=%s next=%s\n", a.ID, a.Name, a.NodeID, a.NextAllocation)
		case a.FollowupEvalID != "":
			fmt.Fprintf(b, "awaiting %s %s node=%s followup=%s\n", a.ID, a.Name, a.NodeID, a.FollowupEvalID)
		}
	}
	for _, e := range p.FollowupEvals {
		fmt.Fprintf(b, "followup-eval %s trigger=%s previous=%s wait_until=now+%s\n", e.ID, e.TriggeredBy, e.PreviousEval, e.WaitUntil.Sub(now))
	}
}

// renderTracker writes a placement's reschedule history.
func renderTracker(t *structs.RescheduleTracker) string {
	if t == nil {
		return ""
	}
	parts := make([]string, len(t.Events))
	for i, e := range t.Events {
		parts[i] = fmt.Sprintf("%s@%s/%s", e.PrevAllocID, e.PrevNodeID, e.Delay)
	}
	return " tracker=" + strings.Join(parts, ",")
}
