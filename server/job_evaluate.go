package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// JobEvaluate creates an evaluation of an existing job (Nomad's force
// evaluation): the scheduler looks at the job again, placing what is
// missing now that nodes or capacity may have changed. An unknown job is
// KindNotFound. ForceReschedule is refused: the scheduler does not honour
// it yet.
func (s *Server) JobEvaluate(ctx context.Context, req *structs.JobEvaluateRequest) (*structs.JobRegisterResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if req.ForceReschedule {
		return nil, structs.Invalid("force_reschedule is not supported by drover yet: evaluate without it, or stop the failed allocations (alloc stop)")
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
	return applyWrite(s, req.RequestID, ApplyPlanResultsRequestType, &PlanResultCommand{Evals: []*structs.Evaluation{eval}},
		&structs.JobRegisterResponse{EvalID: eval.ID, JobModifyIndex: job.JobModifyIndex}, completeJobEvaluate)
}

// completeJobEvaluate completes an evaluation's reply with its index.
func completeJobEvaluate(r *structs.JobRegisterResponse, index uint64, _ any) {
	r.EvalCreateIndex, r.Index = index, index
}
