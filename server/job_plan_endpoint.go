package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// JobPlan runs the scheduler for a submitted job against a snapshot of the
// state, as if the job were registered, and returns what it would do. It
// writes nothing: no job, evaluation, allocation or deployment.
func (s *Server) JobPlan(ctx context.Context, req *structs.JobPlanRequest) (*structs.JobPlanResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.Job == nil {
		return nil, structs.Invalid("missing job")
	}
	job := req.Job.Copy()
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		return nil, err
	}
	if err := checkTaskConfigs(s.config.TaskConfigs, job); err != nil {
		return nil, err
	}
	if err := checkJobCount(job, s.config.JobMaxCount); err != nil {
		return nil, err
	}
	if err := checkMountDrivers(job, func() ([]*structs.Node, error) { return s.fsm.State().Nodes(nil) }); err != nil { // job_volumes.go
		return nil, err
	}
	if err := s.fsm.storableJob(job); err != nil {
		return nil, err
	}
	if err := s.checkJobNamespace(job); err != nil {
		return nil, err
	}
	snap := s.fsm.State().Snapshot()
	existing, err := snap.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", job.ID, err)
	}
	resp := &structs.JobPlanResponse{}
	resp.Index = snap.LatestIndex()
	// The planned job gets the indexes a registration would give it, so
	// that the scheduler sees the current allocations as older.
	planned := job
	next := snap.LatestIndex() + 1
	planned.JobModifyIndex, planned.ModifyIndex, planned.CreateIndex = next, next, next
	if existing != nil {
		resp.JobModifyIndex = existing.JobModifyIndex
		changed, err := s.specChanged(existing, job)
		if err != nil {
			return nil, err
		}
		if changed {
			planned.Version = existing.Version + 1
			planned.CreateIndex = existing.CreateIndex
		} else {
			planned = existing
		}
	}
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   planned.Namespace,
		Priority:    planned.Priority,
		Type:        planned.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       planned.ID,
		Status:      structs.EvalStatusPending,
	}
	// The caller's context interrupts the pass (a plan nobody waits for
	// stops computing), and so does the deadline of an evaluation.
	pctx, stop := s.evalContext(ctx)
	defer stop()
	plan, err := scheduler.Options{Context: pctx, Now: s.clock.Now}.Process(planState{schedState: schedState{snap: snap}, job: planned}, eval)
	if err != nil {
		var timeout *evalTimeoutError
		if errors.As(err, &timeout) {
			return nil, structs.NewError(structs.KindUnavailable, "plan job %q: %v", job.ID, timeout)
		}
		return nil, fmt.Errorf("plan job %q: %w", job.ID, err)
	}
	resp.Annotations = plan.Annotations
	resp.FailedTGAllocs = plan.FailedTGAllocs
	resp.PlacementMetrics = placementMetrics(plan) // job_plan_scores.go
	if len(plan.FailedTGAllocs) > 0 {
		// What running the job would create besides its allocations: the
		// evaluation blocked until capacity for the failed ones frees up.
		eval.JobModifyIndex = planned.JobModifyIndex
		resp.CreatedEvals = []*structs.Evaluation{blockedEval(eval, plan, snap.LatestIndex(), s.clock.Now().UnixNano())}
	}
	if req.Diff {
		resp.Diff = structs.DiffJobs(existing, planned)
		for _, g := range resp.Diff.TaskGroups {
			g.Updates = updateCounts(plan.Annotations.DesiredTGUpdates[g.Name])
		}
	}
	return resp, nil
}

// updateCounts turns a group's plan counts into TaskGroupDiff.Updates.
func updateCounts(d *structs.DesiredUpdates) map[string]uint64 {
	if d == nil {
		return nil
	}
	out := map[string]uint64{}
	add := func(k string, v uint64) {
		if v > 0 {
			out[k] = v
		}
	}
	add(structs.UpdateTypeIgnore, d.Ignore)
	add(structs.UpdateTypeCreate, d.Place)
	add(structs.UpdateTypeDestroy, d.Stop)
	add(structs.UpdateTypeMigrate, d.Migrate)
	add(structs.UpdateTypeCanary, d.Canary)
	add(structs.UpdateTypeInplaceUpdate, d.InPlaceUpdate)
	add(structs.UpdateTypeDestructiveUpdate, d.DestructiveUpdate)
	return out
}

// planState is a snapshot in which the planned job replaces the stored one.
type planState struct {
	schedState
	job *structs.Job
}

func (p planState) JobByID(namespace, id string) (*structs.Job, error) {
	if namespace == p.job.Namespace && id == p.job.ID {
		return p.job, nil
	}
	return p.schedState.JobByID(namespace, id)
}
