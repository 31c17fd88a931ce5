package scheduler

import (
	"fmt"
	"reflect"

	"github.com/drover-io/drover/structs"
)

// Deployment status descriptions.
const (
	DescDeploymentRunning    = "Deployment is running"
	DescDeploymentSuccessful = "Deployment completed successfully"
	DescDeploymentFailed     = "Failed due to unhealthy allocations"
	DescDeploymentCancelled  = "Cancelled due to newer version of job"
	DescDeploymentStopped    = "Cancelled because job is stopped"
	DescDeploymentPaused     = "Deployment is paused"
	DescDeploymentResumed    = "Deployment is running"
	DescDeploymentFailedHand = "Deployment marked as failed"
	DescProgressDeadline     = "Failed due to progress deadline"
	DescNeedsPromotion       = "Deployment is running but requires manual promotion"
	DescAutoPromotion        = "Deployment is running pending automatic promotion"
)

// deploymentRun is the deployment work of one Process call.
type deploymentRun struct {
	loaded   bool
	latest   *structs.Deployment // as read from the state
	current  *structs.Deployment // the current version's, copied; nil when none
	original *structs.Deployment // current as read, nil when created here
	pending  bool                // some group still has allocations to replace or await
	// promoteChecked is set once autoPromote looked at current.
	promoteChecked bool
}

// rolling reports whether destructive updates of tg go in batches.
func (r *run) rolling(tg *structs.TaskGroup) bool {
	return r.job.Type == structs.JobTypeService && tg.Update.Rolling()
}

// deploymentFor returns the deployment of the current job version and
// tg's state in it, creating them when needed (tg has destructive updates
// to make). An active deployment of an earlier version is cancelled.
func (r *run) deploymentFor(tg *structs.TaskGroup, needed bool) (*structs.Deployment, *structs.DeploymentState) {
	d := &r.deps
	if !r.loadDeployment() {
		return nil, nil
	}
	if d.current == nil {
		if !needed {
			return nil, nil
		}
		d.current = &structs.Deployment{
			ID:                 r.newDeploymentID(),
			Namespace:          r.job.Namespace,
			JobID:              r.job.ID,
			JobVersion:         r.job.Version,
			JobModifyIndex:     r.job.ModifyIndex,
			JobSpecModifyIndex: r.job.JobModifyIndex,
			JobCreateIndex:     r.job.CreateIndex,
			TaskGroups:         map[string]*structs.DeploymentState{},
			Status:             structs.DeploymentStatusRunning,
			StatusDescription:  DescDeploymentRunning,
		}
	}
	st, ok := d.current.TaskGroups[tg.Name]
	if !ok {
		if !needed || !d.current.Active() {
			return nil, nil
		}
		st = &structs.DeploymentState{
			AutoRevert:       tg.Update.AutoRevert,
			AutoPromote:      tg.Update.AutoPromote,
			ProgressDeadline: tg.Update.ProgressDeadline,
			DesiredTotal:     tg.Count,
		}
		if tg.Update.ProgressDeadline > 0 {
			st.RequireProgressBy = r.nowTime().Add(tg.Update.ProgressDeadline)
		}
		if d.current.TaskGroups == nil {
			d.current.TaskGroups = map[string]*structs.DeploymentState{}
		}
		d.current.TaskGroups[tg.Name] = st
	}
	return d.current, st
}

// loadDeployment reads the job's latest deployment once per run: the
// current version's becomes deps.current (a copy), an active one of an
// earlier version is cancelled. It reports false on a read error (r.err).
func (r *run) loadDeployment() bool {
	d := &r.deps
	if d.loaded {
		return true
	}
	d.loaded = true
	latest, err := r.state.LatestDeployment(r.job.Namespace, r.job.ID)
	if err != nil {
		r.err = fmt.Errorf("read deployment of job %q: %w", r.job.ID, err)
		return false
	}
	d.latest = latest
	switch {
	case latest == nil:
	case latest.JobSpecModifyIndex == r.job.JobModifyIndex && latest.JobCreateIndex == r.job.CreateIndex:
		d.current, d.original = latest.Copy(), latest
	case latest.Active():
		c := latest.Copy()
		c.Status, c.StatusDescription = structs.DeploymentStatusCancelled, DescDeploymentCancelled
		r.plan.Deployments = append(r.plan.Deployments, c)
	}
	return true
}

// rollingBatch counts the health of the deployment's allocations of tg
// and returns the old allocations to replace now: at most MaxParallel
// minus those placed and not yet healthy. An unhealthy allocation fails
// the deployment, which then replaces nothing more.
func (r *run) rollingBatch(tg *structs.TaskGroup, dep *structs.Deployment, st *structs.DeploymentState, allocs, destructive []*structs.Allocation) []*structs.Allocation {
	placed, healthy, unhealthy, inflight := 0, 0, 0, 0
	for _, a := range allocs {
		if a.DeploymentID != dep.ID {
			continue
		}
		placed++
		switch {
		case a.DeploymentStatus.IsHealthy():
			healthy++
		case a.DeploymentStatus.IsUnhealthy(),
			a.ClientStatus == structs.AllocClientStatusFailed,
			a.ClientStatus == structs.AllocClientStatusLost:
			unhealthy++
		case !a.TerminalStatus():
			inflight++
		}
	}
	if healthy > st.HealthyAllocs && st.ProgressDeadline > 0 {
		// A newly healthy allocation is progress: the group has another
		// progress_deadline to make more.
		st.RequireProgressBy = r.nowTime().Add(st.ProgressDeadline)
	}
	st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs = placed, healthy, unhealthy
	st.DesiredTotal = tg.Count
	if unhealthy > 0 && dep.Active() {
		dep.Status, dep.StatusDescription = structs.DeploymentStatusFailed, DescDeploymentFailed
	}
	if !dep.Active() {
		return nil
	}
	if dep.Status == structs.DeploymentStatusPaused {
		// Paused: no new batch until resumed, and not finished either.
		r.deps.pending = true
		return nil
	}
	limit := min(tg.Update.MaxParallel-inflight, len(destructive))
	if limit < 0 {
		limit = 0
	}
	batch := destructive[:limit]
	st.PlacedAllocs += len(batch)
	if len(destructive) > 0 || inflight > 0 {
		r.deps.pending = true
	}
	return batch
}

// finishDeployment marks the current deployment successful when nothing
// is left to replace or await, and adds it to the plan when it changed.
func (r *run) finishDeployment() {
	d := &r.deps
	if d.current == nil {
		return
	}
	if d.current.Active() && !d.pending && len(d.current.TaskGroups) > 0 {
		d.current.Status, d.current.StatusDescription = structs.DeploymentStatusSuccessful, DescDeploymentSuccessful
	}
	if d.current.Status == structs.DeploymentStatusRunning {
		d.current.StatusDescription = runningDescription(d.current)
	}
	if d.original == nil || !reflect.DeepEqual(d.original, d.current) {
		r.plan.Deployments = append(r.plan.Deployments, d.current)
	}
}

// runningDescription describes a running deployment: waiting for the
// promotion of its canaries (by hand, or automatic when every group with
// canaries has auto_promote), or just running.
func runningDescription(d *structs.Deployment) string {
	canaries, auto := false, true
	for _, g := range d.TaskGroups {
		if g.HasCanaries() {
			canaries = true
			auto = auto && g.AutoPromote
		}
	}
	switch {
	case !canaries:
		return DescDeploymentRunning
	case auto:
		return DescAutoPromotion
	}
	return DescNeedsPromotion
}

// cancelDeployment cancels the job's active deployment: the job was
// stopped or purged.
func (r *run) cancelDeployment(namespace, jobID string) error {
	d, err := r.state.LatestDeployment(namespace, jobID)
	if err != nil {
		return fmt.Errorf("read deployment of job %q: %w", jobID, err)
	}
	if d == nil || !d.Active() {
		return nil
	}
	c := d.Copy()
	c.Status, c.StatusDescription = structs.DeploymentStatusCancelled, DescDeploymentStopped
	r.plan.Deployments = append(r.plan.Deployments, c)
	return nil
}
