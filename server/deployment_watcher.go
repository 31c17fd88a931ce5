package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The deployment watcher is the leader's part of rolling updates; the
// scheduler does the rest:
//
//   - a client reporting the health of an allocation placed by a deployment
//     (AllocDeploymentStatus, or the allocation failing) creates an
//     evaluation of its job, in the same raft entry, so that the scheduler
//     places the next batch or fails the deployment (healthEvals);
//   - a plan that fails a deployment whose group has auto_revert
//     re-registers the job's latest stable version once the plan is
//     committed (autoRevert);
//   - a running deployment past a group's progress deadline is failed,
//     with the same auto_revert (deployment_deadline.go); deployments are
//     failed, paused and resumed by hand in deployment_ops.go.

// healthEvals returns one evaluation per job whose deployment allocations
// changed health in updates (client updates, against the stored allocs).
func (s *Server) healthEvals(st *state.StateStore, updates []*structs.Allocation) ([]*structs.Evaluation, error) {
	now := s.clock.Now().UnixNano()
	seen := map[structs.NamespacedID]bool{}
	var out []*structs.Evaluation
	for _, u := range updates {
		existing, err := st.AllocByID(nil, u.ID)
		if err != nil {
			return nil, fmt.Errorf("read alloc %q: %w", u.ID, err)
		}
		if existing == nil || existing.DeploymentID == "" || !healthChanged(existing, u) {
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
		if job == nil || job.Stop {
			continue
		}
		out = append(out, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      job.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerDeploymentWatcher,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			DeploymentID:   existing.DeploymentID,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		})
	}
	return out, nil
}

// healthChanged reports whether a client update changes what the
// scheduler's rolling update sees of an allocation: its health verdict,
// or its failing.
func healthChanged(old, u *structs.Allocation) bool {
	stale := u.DeploymentID != old.DeploymentID // "" included: see UpdateAllocsFromClient
	if u.DeploymentStatus != nil && u.DeploymentStatus.Healthy != nil && !stale {
		if old.DeploymentStatus == nil || old.DeploymentStatus.Healthy == nil ||
			*old.DeploymentStatus.Healthy != *u.DeploymentStatus.Healthy {
			return true
		}
	}
	failed := func(s string) bool {
		return s == structs.AllocClientStatusFailed || s == structs.AllocClientStatusLost
	}
	return failed(u.ClientStatus) && !failed(old.ClientStatus)
}

// revertTarget returns, for a plan's deployments, the one that fails with
// auto_revert set and the stable version to go back to (nil when there is
// none: no earlier version succeeded).
func revertTarget(snap *state.StateSnapshot, plan *scheduler.Plan) (*structs.Deployment, *structs.Job, error) {
	for _, d := range plan.Deployments {
		if d.Status != structs.DeploymentStatusFailed || !autoRevert(d) {
			continue
		}
		versions, err := snap.JobVersions(nil, d.Namespace, d.JobID)
		if err != nil {
			return nil, nil, fmt.Errorf("read versions of job %q: %w", d.JobID, err)
		}
		for _, v := range versions { // newest first
			if v.Version < d.JobVersion && v.Stable {
				return d, v, nil
			}
		}
		return d, nil, nil
	}
	return nil, nil, nil
}

func autoRevert(d *structs.Deployment) bool {
	for _, g := range d.TaskGroups {
		if g.AutoRevert {
			return true
		}
	}
	return false
}

// autoRevert re-registers target as the job's newest version.
func (s *Server) autoRevert(d *structs.Deployment, target *structs.Job) {
	logger := s.logger.With("job_id", d.JobID)
	_, err := rpcapi.JobRevert.Call(s.ctx, s, &structs.JobRevertRequest{
		Namespace: d.Namespace, JobID: d.JobID, JobVersion: target.Version,
	})
	if err != nil {
		logger.Error("auto-revert failed deployment", "deployment_id", d.ID, "version", target.Version, "error", err)
		return
	}
	logger.Info("auto-reverted failed deployment", "deployment_id", d.ID, "version", target.Version)
}

// JobRevert registers a kept version of a job again, as its newest version.
func (s *Server) JobRevert(ctx context.Context, req *structs.JobRevertRequest) (*structs.JobRegisterResponse, error) {
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
	st := s.fsm.State()
	cur, err := st.JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	if cur == nil {
		return nil, structs.NotFound("job", req.JobID)
	}
	if req.EnforcePriorVersion != nil && cur.Version != *req.EnforcePriorVersion {
		return nil, structs.NewError(structs.KindConflict, "current job has version %d; enforcing version %d failed: revert refused", cur.Version, *req.EnforcePriorVersion)
	}
	if req.JobVersion == cur.Version {
		return nil, structs.Invalid("can't revert job %q to version %d: it is the current version", req.JobID, req.JobVersion)
	}
	old, err := st.JobByIDAndVersion(nil, ns, req.JobID, req.JobVersion)
	if err != nil {
		return nil, fmt.Errorf("read version %d of job %q: %w", req.JobVersion, req.JobID, err)
	}
	if old == nil {
		return nil, structs.NewError(structs.KindNotFound, "job %q has no version %d (kept: the last %d)", req.JobID, req.JobVersion, structs.JobTrackedVersions)
	}
	job := old.Copy()
	job.Stop = false
	job.Stable = false
	return s.JobRegister(ctx, &structs.JobRegisterRequest{Job: job, WriteRequest: req.WriteRequest})
}
