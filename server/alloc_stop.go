package server

import (
	"context"

	"github.com/drover-io/drover/structs"
)

// allocStopDesc is the DesiredDescription of an allocation an operator
// stopped.
const allocStopDesc = "alloc stopped by operator request"

// AllocStop stops an allocation on an operator's request: in one raft
// entry it marks the allocation's desired status stop (the client kills its
// tasks) and stores an evaluation of its job, which places a replacement
// as the job's count requires. Stopping an allocation the server already
// stopped only creates the evaluation. The allocation is named by its ID
// or a unique ID prefix; an unknown one is KindNotFound. Reschedule and
// NoShutdownDelay are recorded in the allocation's DesiredTransition.
func (s *Server) AllocStop(ctx context.Context, req *structs.AllocStopRequest) (*structs.AllocStopResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.AllocID == "" {
		return nil, structs.Invalid("missing allocation ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeAllocStop); ok || err != nil {
		return r, err
	}
	alloc, err := lookupAlloc(nil, s.fsm.State(), req.AllocID)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   alloc.Namespace,
		TriggeredBy: structs.EvalTriggerAllocStop,
		JobID:       alloc.JobID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	if alloc.Job != nil {
		eval.Priority = alloc.Job.Priority
		eval.Type = alloc.Job.Type
	}
	if job, err := s.fsm.State().JobByID(nil, alloc.Namespace, alloc.JobID); err == nil && job != nil {
		eval.Priority, eval.Type = job.Priority, job.Type
	}
	cmd := &PlanResultCommand{Evals: []*structs.Evaluation{eval}}
	if !alloc.ServerTerminalStatus() {
		stopped := alloc.Copy()
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		stopped.DesiredDescription = allocStopDesc
		stopped.ModifyTime = now
		if req.Reschedule {
			stopped.DesiredTransition.Reschedule = new(true)
		}
		if req.NoShutdownDelay {
			stopped.DesiredTransition.NoShutdownDelay = new(true)
		}
		cmd.Allocs = []*structs.Allocation{stopped}
	}
	return applyWrite(s, req.RequestID, ApplyPlanResultsRequestType, cmd, &structs.AllocStopResponse{EvalID: eval.ID}, completeAllocStop)
}

// completeAllocStop completes a stop's reply with its index.
func completeAllocStop(r *structs.AllocStopResponse, index uint64, _ any) { r.Index = index }
