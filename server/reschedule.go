package server

import (
	"fmt"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// failureEvals returns one evaluation per job (TriggeredBy "alloc-failure")
// for the client updates that newly report an allocation failed while the
// server still wants it running, so that the scheduler applies the group's
// reschedule policy. Jobs already covered by an evaluation in have are
// skipped.
func (s *Server) failureEvals(st *state.StateStore, updates []*structs.Allocation, have []*structs.Evaluation) ([]*structs.Evaluation, error) {
	now := s.clock.Now().UnixNano()
	seen := map[structs.NamespacedID]bool{}
	for _, e := range have {
		seen[structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}] = true
	}
	var out []*structs.Evaluation
	for _, u := range updates {
		if u.ClientStatus != structs.AllocClientStatusFailed {
			continue
		}
		existing, err := st.AllocByID(nil, u.ID)
		if err != nil {
			return nil, fmt.Errorf("read alloc %q: %w", u.ID, err)
		}
		if existing == nil || existing.ClientStatus == structs.AllocClientStatusFailed || existing.ServerTerminalStatus() {
			continue
		}
		key := structs.NamespacedID{Namespace: existing.Namespace, ID: existing.JobID}
		if seen[key] {
			continue
		}
		seen[key] = true
		job, err := st.JobByID(nil, existing.Namespace, existing.JobID)
		if err != nil {
			return nil, fmt.Errorf("read job %q: %w", existing.JobID, err)
		}
		if job == nil || job.Stop || job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch {
			continue
		}
		out = append(out, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      job.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerAllocFailure,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		})
	}
	return out, nil
}

// rescheduleUpdates returns the plan's reschedule annotations of failed
// allocations that may be committed: a NextAllocation only with its
// replacement (accepted names the placements committed), a FollowupEvalID
// only with the follow-up evaluation, that is when the plan was not
// rejected.
func rescheduleUpdates(plan *scheduler.Plan, accepted map[string]bool, rejected bool) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range plan.AllocUpdates {
		switch {
		case a.NextAllocation != "" && accepted[a.NextAllocation]:
			out = append(out, a)
		case a.NextAllocation == "" && a.FollowupEvalID != "" && !rejected:
			out = append(out, a)
		}
	}
	return out
}
