package server

import (
	"context"
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// JobScale sets the count of a job's group, as Nomad's Job.Scale: the job
// is stored as a new version (its count changed) with an evaluation, and
// the request is recorded as a scaling event of the group. A count outside
// the group's scaling block's [min, max] is refused unless PolicyOverride.
// A request without a count records its message (an autoscaler's error,
// say) as an event and changes nothing else.
func (s *Server) JobScale(ctx context.Context, req *structs.JobScaleRequest) (*structs.JobRegisterResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeJobRegister); ok || err != nil {
		return r, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if req.Group == "" {
		return nil, structs.Invalid("scaling request has no target group: set Target.Group")
	}
	if req.Count != nil && req.Error {
		return nil, structs.Invalid("a scaling request with Error set cannot change the count")
	}
	existing, err := s.fsm.State().JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	if existing == nil {
		return nil, structs.NotFound("job", req.JobID)
	}
	tg := existing.LookupTaskGroup(req.Group)
	if tg == nil {
		return nil, structs.Invalid("group %q does not exist in job %q", req.Group, req.JobID)
	}
	if req.EnforceIndex && existing.JobModifyIndex != req.JobModifyIndex {
		return nil, structs.NewError(structs.KindConflict, "%s %d: job %q exists with conflicting job modify index %d",
			EnforceIndexErrPrefix, req.JobModifyIndex, req.JobID, existing.JobModifyIndex)
	}
	now := s.clock.Now().UnixNano()
	event := &structs.ScalingEvent{Time: now, PreviousCount: int64(tg.Count), Message: req.Message, Error: req.Error, Meta: req.Meta}
	if req.Count == nil {
		cmd := &JobScalingEventCommand{Namespace: ns, JobID: req.JobID, Group: req.Group, Event: event}
		return applyWrite(s, req.RequestID, JobScalingEventRequestType, cmd,
			&structs.JobRegisterResponse{JobModifyIndex: existing.JobModifyIndex}, completeScalingEvent)
	}
	count := *req.Count
	if err := checkScaleCount(req.Group, tg, count, req.PolicyOverride); err != nil {
		return nil, err
	}
	if existing.Type == structs.JobTypeSystem {
		return nil, structs.Invalid("job %q is a system job: its groups run on every eligible node and have no count to scale", req.JobID)
	}
	if existing.Stop {
		return nil, structs.Invalid("job %q is stopped: run it again before scaling it", req.JobID)
	}
	job := existing.Copy()
	job.LookupTaskGroup(req.Group).Count = int(count)
	job.Version = existing.Version + 1
	job.Stable = false
	job.SubmitTime = now
	job.Status, job.StatusDescription = "", ""
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   ns,
		Priority:    job.Priority,
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerScaling,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	event.Count = &count
	event.EvalID = &eval.ID
	job.ScalingEvents = existing.WithScalingEvent(req.Group, event)
	if err := checkJobCount(job, s.config.JobMaxCount); err != nil {
		return nil, err
	}
	if err := s.fsm.storableJob(job); err != nil {
		return nil, err
	}
	s.logger.Info("scaling job group", "job_id", job.ID, "namespace", ns, "group", req.Group,
		"previous_count", tg.Count, "count", count, "eval_id", eval.ID)
	return applyWrite(s, req.RequestID, JobRegisterRequestType, &JobRegisterCommand{Job: job, Eval: eval, CheckNamespace: true},
		&structs.JobRegisterResponse{EvalID: eval.ID}, completeJobRegister)
}

// completeScalingEvent completes the reply of a scaling request that only
// recorded an event.
func completeScalingEvent(r *structs.JobRegisterResponse, index uint64, _ any) {
	r.Index = index
}

// checkScaleCount refuses a count below 0, or outside the group's scaling
// block's bounds (unless override).
func checkScaleCount(group string, tg *structs.TaskGroup, count int64, override bool) error {
	if count < 0 {
		return structs.Invalid("group %q: count %d must not be negative", group, count)
	}
	if p := tg.Scaling; p != nil && !override && (count < p.Min || count > p.Max) {
		return structs.Invalid("group %q: count %d is outside the scaling block's bounds [%d, %d] (set PolicyOverride to go past them)",
			group, count, p.Min, p.Max)
	}
	return nil
}

// JobScaleStatus reports each group's count, its allocations (placed,
// running, healthy, unhealthy) and its scaling events.
func (s *Server) JobScaleStatus(ctx context.Context, req *structs.JobSpecificRequest) (*structs.JobScaleStatusResponse, error) {
	resp := &structs.JobScaleStatusResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.MaxIndex(state.TableJobs, state.TableAllocs)
		job, err := st.JobByID(ws, ns, req.JobID)
		if err != nil {
			return index, err
		}
		if job == nil {
			return index, structs.NotFound("job", req.JobID)
		}
		allocs, err := st.AllocsByJob(ws, ns, req.JobID)
		if err != nil {
			return index, err
		}
		*resp = structs.JobScaleStatusResponse{
			JobID: job.ID, Namespace: job.Namespace, JobCreateIndex: job.CreateIndex, JobModifyIndex: job.JobModifyIndex,
			JobStopped: job.Stop, TaskGroups: make(map[string]structs.TaskGroupScaleStatus, len(job.TaskGroups)),
		}
		for _, tg := range job.TaskGroups {
			resp.TaskGroups[tg.Name] = structs.TaskGroupScaleStatus{Desired: tg.Count, Events: job.ScalingEvents[tg.Name]}
		}
		for _, a := range allocs {
			gs, ok := resp.TaskGroups[a.TaskGroup]
			if !ok || a.Job == nil || a.Job.CreateIndex != job.CreateIndex || a.ServerTerminalStatus() || a.ClientTerminalStatus() {
				continue
			}
			gs.Placed++
			if a.ClientStatus == structs.AllocClientStatusRunning {
				gs.Running++
			}
			if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
				if *ds.Healthy {
					gs.Healthy++
				} else {
					gs.Unhealthy++
				}
			}
			resp.TaskGroups[a.TaskGroup] = gs
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ScalingPolicyList lists the scaling policies of the jobs of the
// request's namespace ("*": all), filtered by job ID and by type prefix.
func (s *Server) ScalingPolicyList(ctx context.Context, req *structs.ScalingPolicyListRequest) (*structs.ScalingPolicyListResponse, error) {
	resp := &structs.ScalingPolicyListResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableJobs)
		jobs, err := st.Jobs(ws)
		if err != nil {
			return index, err
		}
		resp.Policies = []*structs.ScalingPolicyListStub{}
		for _, j := range jobs {
			if !inNamespace(ns, j.Namespace) || (req.Job != "" && j.ID != req.Job) {
				continue
			}
			for _, p := range j.ScalingPolicies() {
				if req.Type != "" && !strings.HasPrefix(p.Type, req.Type) {
					continue
				}
				if req.Prefix != "" && !strings.HasPrefix(p.ID, req.Prefix) {
					continue
				}
				resp.Policies = append(resp.Policies, policyIndexes(p, j).Stub())
			}
		}
		structs.SortScalingStubs(resp.Policies)
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ScalingPolicyGet reads one scaling policy by ID; an unknown ID is
// KindNotFound.
func (s *Server) ScalingPolicyGet(ctx context.Context, req *structs.ScalingPolicySpecificRequest) (*structs.SingleScalingPolicyResponse, error) {
	resp := &structs.SingleScalingPolicyResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableJobs)
		jobs, err := st.Jobs(ws)
		if err != nil {
			return index, err
		}
		for _, j := range jobs {
			for _, p := range j.ScalingPolicies() {
				if p.ID == req.ID {
					resp.Policy = policyIndexes(p, j)
					return index, nil
				}
			}
		}
		return index, structs.NotFound("scaling policy", req.ID)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// policyIndexes returns a copy of p (of job j) with its indexes: the
// job's CreateIndex when the policy has none of its own, and the job's
// JobModifyIndex.
func policyIndexes(p *structs.ScalingPolicy, j *structs.Job) *structs.ScalingPolicy {
	c := p.Copy()
	if c.CreateIndex == 0 {
		c.CreateIndex = j.CreateIndex
	}
	c.ModifyIndex = j.JobModifyIndex
	return c
}
