package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// JobEvaluate creates an evaluation of an existing job (Nomad's force
// evaluation): the scheduler looks at the job again, placing what is
// missing now that nodes or capacity may have changed. An unknown job is
// KindNotFound. With ForceReschedule, the job's failed allocations that
// have no replacement yet are marked (DesiredTransition.ForceReschedule)
// in the same raft entry, and the scheduler replaces them now, whatever
// their reschedule policy's delay and attempts.
func (s *Server) JobEvaluate(ctx context.Context, req *structs.JobEvaluateRequest) (*structs.JobRegisterResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeJobEvaluate); ok || err != nil {
		return r, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	job, err := s.fsm.State().JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	if job == nil {
		return nil, structs.NotFound("job", req.JobID)
	}
	now := s.clock.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      ns,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerJobRegister,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		CreateTime:     now,
		ModifyTime:     now,
	}
	cmd := &PlanResultCommand{Evals: []*structs.Evaluation{eval}}
	if req.ForceReschedule {
		allocs, err := s.fsm.State().AllocsByJob(nil, ns, req.JobID)
		if err != nil {
			return nil, fmt.Errorf("read allocations of job %q: %w", req.JobID, err)
		}
		for _, a := range allocs {
			if a.ClientStatus != structs.AllocClientStatusFailed || a.ServerTerminalStatus() || a.NextAllocation != "" {
				continue
			}
			c := a.Copy()
			c.DesiredTransition.ForceReschedule = new(true)
			c.ModifyTime = now
			cmd.Allocs = append(cmd.Allocs, c)
		}
	}
	return applyWrite(s, req.RequestID, ApplyPlanResultsRequestType, cmd,
		&structs.JobRegisterResponse{EvalID: eval.ID, JobModifyIndex: job.JobModifyIndex}, completeJobEvaluate)
}

// completeJobEvaluate completes an evaluation's reply with its index.
func completeJobEvaluate(r *structs.JobRegisterResponse, index uint64, _ any) {
	r.EvalCreateIndex, r.Index = index, index
}
