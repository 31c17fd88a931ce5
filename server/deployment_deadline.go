package server

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// progressRecheck bounds how long the progress deadline watcher sleeps
// without looking at the deployments again (leadership changes and state
// restores do not wake it otherwise).
const progressRecheck = 30 * time.Second

// runProgressDeadlines is the leader's progress_deadline enforcement: it
// fails each running deployment one of whose groups has not made progress
// (a newly healthy allocation, which the scheduler records by pushing
// RequireProgressBy forward) by its RequireProgressBy, applying
// auto_revert as a health failure does. It sleeps until the earliest
// deadline (on the server's clock) or a change of the deployments.
func (s *Server) runProgressDeadlines() {
	for {
		ws := memdb.NewWatchSet()
		next := s.checkProgressDeadlines(ws)
		wait := progressRecheck
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.clock.Now()), 0))
		}
		wake := make(chan struct{}, 1)
		timer := s.clock.AfterFunc(wait, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		ctx, cancel := context.WithCancel(s.ctx)
		changed := ws.WatchCh(ctx)
		select {
		case <-s.ctx.Done():
		case <-wake:
		case <-changed:
		}
		cancel()
		timer.Stop()
		if s.ctx.Err() != nil {
			return
		}
	}
}

// checkProgressDeadlines fails the overdue deployments (when leader) and
// returns the earliest deadline still to come (zero: none).
func (s *Server) checkProgressDeadlines(ws memdb.WatchSet) time.Time {
	ds, err := s.fsm.State().Deployments(ws)
	if err != nil {
		s.logger.Error("read deployments for progress deadlines", "error", err)
		return time.Time{}
	}
	now := s.clock.Now()
	var next time.Time
	for _, d := range ds {
		if d.Status != structs.DeploymentStatusRunning {
			continue
		}
		due, overdue := progressDue(d, now)
		if overdue && s.leader() {
			if _, err := s.failDeployment(s.ctx, d, scheduler.DescProgressDeadline); err != nil {
				s.logger.Error("fail deployment past its progress deadline", "job_id", d.JobID, "deployment_id", d.ID, "error", err)
			} else {
				s.logger.Warn("deployment failed its progress deadline", "job_id", d.JobID, "deployment_id", d.ID)
			}
			continue
		}
		if !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// progressDue returns the earliest progress deadline of d's unfinished
// groups, and whether one has passed at now.
func progressDue(d *structs.Deployment, now time.Time) (time.Time, bool) {
	var due time.Time
	for _, g := range d.TaskGroups {
		if g.ProgressDeadline <= 0 || g.RequireProgressBy.IsZero() || g.HealthyAllocs >= g.DesiredTotal {
			continue
		}
		if g.HasCanaries() && g.HealthyAllocs >= g.DesiredCanaries {
			// Healthy canaries wait for their promotion, which is no
			// lack of progress (promotion gives a fresh deadline).
			continue
		}
		if now.After(g.RequireProgressBy) {
			return g.RequireProgressBy, true
		}
		if due.IsZero() || g.RequireProgressBy.Before(due) {
			due = g.RequireProgressBy
		}
	}
	return due, false
}
