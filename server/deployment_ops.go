package server

import (
	"context"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// DeploymentFail fails an active deployment by hand; with auto_revert set
// on one of its groups the job goes back to its latest stable version, as
// after a health failure.
func (s *Server) DeploymentFail(ctx context.Context, req *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error) {
	d, err := s.activeDeployment(ctx, req.DeploymentID)
	if err != nil {
		return nil, err
	}
	return s.failDeployment(ctx, d, scheduler.DescDeploymentFailedHand)
}

// DeploymentPause pauses an active deployment (no new batch is placed
// until it resumes) or resumes it. Resuming creates an evaluation of the
// job and gives each group a fresh progress deadline.
func (s *Server) DeploymentPause(ctx context.Context, req *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error) {
	d, err := s.activeDeployment(ctx, req.DeploymentID)
	if err != nil {
		return nil, err
	}
	upd := d.Copy()
	cmd := &deploymentChange{deployment: upd}
	var evalID string
	if req.Pause {
		upd.Status, upd.StatusDescription = structs.DeploymentStatusPaused, scheduler.DescDeploymentPaused
	} else {
		upd.Status, upd.StatusDescription = structs.DeploymentStatusRunning, scheduler.DescDeploymentResumed
		now := s.clock.Now()
		for _, g := range upd.TaskGroups {
			if g.ProgressDeadline > 0 {
				g.RequireProgressBy = now.Add(g.ProgressDeadline)
			}
		}
		eval, err := s.deploymentEval(upd)
		if err != nil {
			return nil, err
		}
		if eval != nil {
			evalID = eval.ID
			cmd.eval = eval
		}
	}
	index, err := s.commitStatusChange(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("update deployment %q: %w", d.ID, err)
	}
	resp := &structs.DeploymentUpdateResponse{EvalID: evalID, DeploymentModifyIndex: index, Index: index}
	if evalID != "" {
		resp.EvalCreateIndex = index
	}
	return resp, nil
}

// deploymentChange is a deployment status change to commit, with the
// evaluation of its job it creates (nil: none).
type deploymentChange struct {
	deployment *structs.Deployment
	eval       *structs.Evaluation
}

// commitStatusChange commits a deployment status change through the plan
// applier, so that it is ordered with the scheduler's plans: one of those
// computed before it cannot undo it (keepDeploymentStatus).
func (s *Server) commitStatusChange(ctx context.Context, c *deploymentChange) (uint64, error) {
	p := &pendingPlan{plan: &scheduler.Plan{Deployments: []*structs.Deployment{c.deployment}}, statusChange: true}
	if c.eval != nil {
		p.evals = []*structs.Evaluation{c.eval}
	}
	res := s.submitPlan(ctx, p)
	if res.Err != nil {
		return 0, res.Err
	}
	return res.Index, nil
}

// deploymentReader reads a deployment by ID (a state snapshot).
type deploymentReader interface {
	DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error)
}

// keepDeploymentStatus returns a scheduler plan's deployments with the
// status committed since the plan's snapshot kept: a deployment failed,
// cancelled or finished meanwhile is left out, one paused or resumed
// meanwhile keeps that status, and a progress deadline pushed forward
// meanwhile is not pulled back. st is the state the plan applier checks
// the plan against (a snapshot, or one with the plans ahead of it laid
// over: planView).
func keepDeploymentStatus(st deploymentReader, ds []*structs.Deployment) ([]*structs.Deployment, error) {
	out := make([]*structs.Deployment, 0, len(ds))
	for _, d := range ds {
		stored, err := st.DeploymentByID(nil, d.ID)
		if err != nil {
			return nil, fmt.Errorf("read deployment %q: %w", d.ID, err)
		}
		switch {
		case stored == nil:
		case !stored.Active():
			continue
		case d.Active():
			// The scheduler never pauses or resumes: the stored state
			// of those, and the later of the progress deadlines, win.
			d = d.Copy()
			if d.Status != stored.Status {
				d.Status, d.StatusDescription = stored.Status, stored.StatusDescription
			}
			for name, g := range d.TaskGroups {
				sg, ok := stored.TaskGroups[name]
				if !ok {
					continue
				}
				if sg.RequireProgressBy.After(g.RequireProgressBy) {
					g.RequireProgressBy = sg.RequireProgressBy
				}
				// A promotion committed meanwhile is not undone.
				g.Promoted = g.Promoted || sg.Promoted
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// activeDeployment returns the deployment with the ID (or unique prefix),
// which must be running or paused.
func (s *Server) activeDeployment(ctx context.Context, id string) (*structs.Deployment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, structs.Invalid("missing deployment ID")
	}
	got, err := s.DeploymentGet(ctx, &structs.DeploymentSpecificRequest{DeploymentID: id})
	if err != nil {
		return nil, err
	}
	d := got.Deployment
	if !d.Active() {
		return nil, structs.Invalid("deployment %q is %s: only a running or paused deployment can change", d.ID, d.Status)
	}
	return d, nil
}

// failDeployment commits d as failed with desc, with an evaluation of its
// job, then applies auto_revert.
func (s *Server) failDeployment(ctx context.Context, d *structs.Deployment, desc string) (*structs.DeploymentUpdateResponse, error) {
	upd := d.Copy()
	upd.Status, upd.StatusDescription = structs.DeploymentStatusFailed, desc
	target, err := s.revertVersion(upd)
	if err != nil {
		return nil, err
	}
	if target != nil {
		upd.StatusDescription += fmt.Sprintf(" - rolling back to job version %d", target.Version)
	}
	cmd := &deploymentChange{deployment: upd}
	eval, err := s.deploymentEval(upd)
	if err != nil {
		return nil, err
	}
	resp := &structs.DeploymentUpdateResponse{}
	if eval != nil && target == nil {
		cmd.eval = eval
		resp.EvalID = eval.ID
	}
	index, err := s.commitStatusChange(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("fail deployment %q: %w", d.ID, err)
	}
	resp.DeploymentModifyIndex, resp.Index = index, index
	if resp.EvalID != "" {
		resp.EvalCreateIndex = index
	}
	if target != nil {
		reg, err := s.JobRevert(ctx, &structs.JobRevertRequest{Namespace: d.Namespace, JobID: d.JobID, JobVersion: target.Version})
		if err != nil {
			return nil, fmt.Errorf("auto-revert job %q to version %d: %w", d.JobID, target.Version, err)
		}
		v := target.Version
		resp.RevertedJobVersion = &v
		resp.EvalID, resp.EvalCreateIndex, resp.Index = reg.EvalID, reg.EvalCreateIndex, reg.Index
		s.logger.Info("auto-reverted failed deployment", "job_id", d.JobID, "deployment_id", d.ID, "version", v)
	}
	return resp, nil
}

// revertVersion returns the job version auto_revert goes back to when d
// fails: its job's latest stable version before d's, unless d has no
// auto_revert group or that version's spec is the current one.
func (s *Server) revertVersion(d *structs.Deployment) (*structs.Job, error) {
	if !autoRevert(d) {
		return nil, nil
	}
	st := s.fsm.State()
	versions, err := st.JobVersions(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, fmt.Errorf("read versions of job %q: %w", d.JobID, err)
	}
	cur, err := st.JobByID(nil, d.Namespace, d.JobID)
	if err != nil || cur == nil || cur.Stop {
		return nil, err
	}
	for _, v := range versions { // newest first
		if v.Version < d.JobVersion && v.Stable {
			changed, err := s.specChanged(cur, v)
			if err != nil || !changed {
				return nil, err
			}
			return v, nil
		}
	}
	return nil, nil
}

// deploymentEval returns an evaluation of d's job, nil when the job is
// gone or stopped.
func (s *Server) deploymentEval(d *structs.Deployment) (*structs.Evaluation, error) {
	job, err := s.fsm.State().JobByID(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", d.JobID, err)
	}
	if job == nil || job.Stop {
		return nil, nil
	}
	now := s.clock.Now().UnixNano()
	return &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerDeploymentWatcher,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		CreateTime:     now,
		ModifyTime:     now,
	}, nil
}
