package server

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/drover-io/drover/structs"
)

// DeploymentPromote promotes the canaries of an active deployment, of
// every group that has some (All) or of the named groups: each must have
// its desired canaries placed and healthy. The promotion is committed with
// an evaluation of the job, whose scheduler run stops the old allocations
// the canaries replace and rolls the rest; the state store clears the
// promoted allocations' canary flag. Each promoted group gets a fresh
// progress deadline.
func (s *Server) DeploymentPromote(ctx context.Context, req *structs.DeploymentPromoteRequest) (*structs.DeploymentUpdateResponse, error) {
	d, err := s.activeDeployment(ctx, req.DeploymentID)
	if err != nil {
		return nil, err
	}
	if !req.All && len(req.Groups) == 0 {
		return nil, structs.Invalid("promote deployment %q: name the groups to promote, or promote all", d.ID)
	}
	groups := req.Groups
	if req.All {
		groups = nil
		for name, g := range d.TaskGroups {
			if g.HasCanaries() {
				groups = append(groups, name)
			}
		}
		if len(groups) == 0 {
			return nil, structs.Invalid("deployment %q has no canaries to promote", d.ID)
		}
	}
	sort.Strings(groups)
	allocs, err := s.fsm.State().AllocsByJob(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of job %q: %w", d.JobID, err)
	}
	upd := d.Copy()
	for _, name := range groups {
		g, ok := upd.TaskGroups[name]
		if !ok {
			return nil, structs.Invalid("deployment %q has no task group %q", d.ID, name)
		}
		if !g.HasCanaries() {
			return nil, structs.Invalid("task group %q of deployment %q has no canaries to promote", name, d.ID)
		}
		if healthy := healthyCanaries(allocs, g); healthy < g.DesiredCanaries {
			return nil, structs.Invalid("task group %q has %d/%d healthy canaries: promote it once they are healthy", name, healthy, g.DesiredCanaries)
		}
		g.Promoted = true
		if g.ProgressDeadline > 0 {
			// Waiting for the promotion was no lack of progress.
			g.RequireProgressBy = s.clock.Now().Add(g.ProgressDeadline)
		}
	}
	cmd := &deploymentChange{deployment: upd}
	eval, err := s.deploymentEval(upd)
	if err != nil {
		return nil, err
	}
	resp := &structs.DeploymentUpdateResponse{}
	if eval != nil {
		cmd.eval = eval
		resp.EvalID = eval.ID
	}
	index, err := s.commitStatusChange(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("promote deployment %q: %w", d.ID, err)
	}
	resp.DeploymentModifyIndex, resp.Index = index, index
	if resp.EvalID != "" {
		resp.EvalCreateIndex = index
	}
	s.logger.Info("promoted deployment", "deployment_id", d.ID, "job_id", d.JobID, "groups", groups)
	return resp, nil
}

// healthyCanaries counts g's placed canaries that are healthy and live.
func healthyCanaries(allocs []*structs.Allocation, g *structs.DeploymentState) int {
	n := 0
	for _, a := range allocs {
		if slices.Contains(g.PlacedCanaries, a.ID) && a.DeploymentStatus.IsHealthy() && !a.TerminalStatus() {
			n++
		}
	}
	return n
}
