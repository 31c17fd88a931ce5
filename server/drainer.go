package server

import (
	"context"
	"fmt"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// drainRecheck bounds how long the drainer sleeps without looking at the
// draining nodes again.
const drainRecheck = 30 * time.Second

// drainDecision is what the drainer does for one draining node now.
type drainDecision struct {
	// Migrate are the allocations to mark for migration.
	Migrate []*structs.Allocation
	// Done: nothing the drain must move is left on the node.
	Done bool
	// Next is when to look again although nothing changed (a replacement
	// reaching its min_healthy_time, the deadline); zero: on changes only.
	Next time.Time
}

// drainView is what a drain decision reads besides the node's own
// allocations: the jobs, and each job's allocations across the cluster.
type drainView interface {
	job(namespace, id string) *structs.Job
	jobAllocs(namespace, id string) []*structs.Allocation
}

// decideDrain is the drainer's pure decision for node at now:
//
//   - past the drain's deadline every allocation still running is marked
//     (system jobs' too, unless IgnoreSystemJobs);
//   - a service group's allocations are marked a few at a time: as many as
//     leave at least count - migrate.max_parallel of the group's
//     allocations healthy (running, their tasks up for min_healthy_time,
//     or reported healthy by a deployment), so a group never has more
//     than max_parallel allocations migrating;
//   - batch allocations are left to finish until the deadline;
//   - system allocations are marked once nothing else is left;
//   - the drain is done when none of them is left running.
func decideDrain(now time.Time, node *structs.Node, onNode []*structs.Allocation, v drainView) drainDecision {
	ds := node.DrainStrategy
	var out drainDecision
	if ds == nil {
		return out
	}
	_, deadline := ds.DeadlineTime()
	force := !deadline.IsZero() && !now.Before(deadline)
	if !deadline.IsZero() && !force {
		out.Next = deadline
	}
	type groupKey struct{ ns, job, group string }
	groups := map[groupKey][]*structs.Allocation{}
	var system []*structs.Allocation
	others := 0 // allocations of other than system jobs still to go
	for _, a := range onNode {
		if a.TerminalStatus() {
			continue
		}
		typ := structs.JobTypeService
		if a.Job != nil {
			typ = a.Job.Type
		}
		if typ == structs.JobTypeSystem {
			if !ds.IgnoreSystemJobs {
				system = append(system, a)
			}
			continue
		}
		others++
		if a.DesiredTransition.ShouldMigrate() {
			continue // on its way
		}
		switch {
		case force:
			out.Migrate = append(out.Migrate, a)
		case typ == structs.JobTypeService:
			k := groupKey{a.Namespace, a.JobID, a.TaskGroup}
			groups[k] = append(groups[k], a)
		}
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.ns+"\x00"+a.job+"\x00"+a.group < b.ns+"\x00"+b.job+"\x00"+b.group
	})
	for _, k := range keys {
		pending := groups[k]
		sort.Slice(pending, func(i, j int) bool { return pending[i].Name < pending[j].Name })
		job := v.job(k.ns, k.job)
		var tg *structs.TaskGroup
		if job != nil && !job.Stop {
			tg = job.LookupTaskGroup(k.group)
		}
		if tg == nil {
			// The job or group is gone: the scheduler stops them anyway.
			out.Migrate = append(out.Migrate, pending...)
			continue
		}
		m := tg.Migrate
		if m == nil {
			m = structs.DefaultMigrateStrategy()
		}
		healthy := 0
		for _, a := range v.jobAllocs(k.ns, k.job) {
			if a.TaskGroup != k.group || a.TerminalStatus() || a.DesiredTransition.ShouldMigrate() {
				continue
			}
			ok, at := allocHealthy(a, m, now)
			if ok {
				healthy++
			} else if !at.IsZero() && (out.Next.IsZero() || at.Before(out.Next)) {
				out.Next = at
			}
		}
		n := min(max(healthy-(tg.Count-max(m.MaxParallel, 1)), 0), len(pending))
		out.Migrate = append(out.Migrate, pending[:n]...)
	}
	if others == 0 || force {
		for _, a := range system {
			if !a.DesiredTransition.ShouldMigrate() {
				out.Migrate = append(out.Migrate, a)
			}
		}
	}
	out.Done = others == 0 && len(system) == 0
	return out
}

// allocHealthy reports whether a is healthy for a migration. The
// client's verdict decides when there is one: a deployment's, or the one
// the client's health watcher reaches with the group's migrate settings
// for an allocation outside a deployment (its service checks passing for
// min_healthy_time with health_check "checks", the default; its task
// states with "task_states"). Without a verdict, health_check "checks"
// waits for it, and "task_states" is judged here from the task states:
// running, every task up for m.MinHealthyTime. When it may become healthy
// with time alone, at is when.
func allocHealthy(a *structs.Allocation, m *structs.MigrateStrategy, now time.Time) (ok bool, at time.Time) {
	if a.ClientStatus != structs.AllocClientStatusRunning {
		return false, time.Time{}
	}
	if d := a.DeploymentStatus; d != nil && d.Healthy != nil {
		return *d.Healthy, time.Time{}
	}
	if m.HealthCheck != structs.MigrateHealthCheckTaskStates {
		return false, time.Time{} // the client's verdict updates the allocation
	}
	var since time.Time
	for _, ts := range a.TaskStates {
		if ts == nil || ts.State != structs.TaskStateRunning {
			return false, time.Time{}
		}
		if ts.StartedAt.After(since) {
			since = ts.StartedAt
		}
	}
	if len(a.TaskStates) == 0 {
		return false, time.Time{}
	}
	at = since.Add(m.MinHealthyTime)
	if now.Before(at) {
		return false, at
	}
	return true, time.Time{}
}

// stateDrainView reads a drainView from the state store, caching per pass
// and adding what it reads to ws.
type stateDrainView struct {
	st     *state.StateStore
	ws     memdb.WatchSet
	jobs   map[structs.NamespacedID]*structs.Job
	allocs map[structs.NamespacedID][]*structs.Allocation
	err    error
}

func (v *stateDrainView) job(ns, id string) *structs.Job {
	k := structs.NamespacedID{Namespace: ns, ID: id}
	if j, ok := v.jobs[k]; ok {
		return j
	}
	j, err := v.st.JobByID(v.ws, ns, id)
	if err != nil && v.err == nil {
		v.err = err
	}
	v.jobs[k] = j
	return j
}

func (v *stateDrainView) jobAllocs(ns, id string) []*structs.Allocation {
	k := structs.NamespacedID{Namespace: ns, ID: id}
	if as, ok := v.allocs[k]; ok {
		return as
	}
	as, err := v.st.AllocsByJob(v.ws, ns, id)
	if err != nil && v.err == nil {
		v.err = err
	}
	v.allocs[k] = as
	return as
}

// runDrainer is the leader's drainer: it watches the draining nodes and
// their jobs' allocations, marks allocations to migrate as decideDrain
// says (with an evaluation per job, which the scheduler acts on), and ends
// each drain that is done, leaving the node ineligible.
func (s *Server) runDrainer() {
	for {
		ws := memdb.NewWatchSet()
		leaderChanged := s.leaderNotify.wait()
		next := s.drainPass(ws)
		wait := drainRecheck
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
		case <-leaderChanged:
		}
		cancel()
		timer.Stop()
		if s.ctx.Err() != nil {
			return
		}
	}
}

// drainPass makes one round of drain decisions when this server leads,
// and returns when to look again (zero: on changes only).
func (s *Server) drainPass(ws memdb.WatchSet) time.Time {
	st := s.fsm.State()
	nodes, err := st.Nodes(ws)
	if err != nil {
		s.logger.Error("read nodes to drain", "error", err)
		return time.Time{}
	}
	if !s.leader() {
		return time.Time{}
	}
	now := s.clock.Now()
	var next time.Time
	v := &stateDrainView{st: st, ws: ws, jobs: map[structs.NamespacedID]*structs.Job{}, allocs: map[structs.NamespacedID][]*structs.Allocation{}}
	for _, n := range nodes {
		if n.DrainStrategy == nil {
			continue
		}
		onNode, err := st.AllocsByNode(ws, n.ID)
		if err != nil {
			s.logger.Error("read allocs of draining node", "node_id", n.ID, "error", err)
			continue
		}
		d := decideDrain(now, n, onNode, v)
		if v.err != nil {
			s.logger.Error("read jobs of draining node", "node_id", n.ID, "error", v.err)
			return now.Add(time.Second)
		}
		if err := s.applyDrainDecision(n, d, now); err != nil {
			s.logger.Error("drain node", "node_id", n.ID, "error", err)
			return now.Add(time.Second)
		}
		if !d.Next.IsZero() && (next.IsZero() || d.Next.Before(next)) {
			next = d.Next
		}
	}
	return next
}

// applyDrainDecision commits d for node through raft.
func (s *Server) applyDrainDecision(node *structs.Node, d drainDecision, now time.Time) error {
	if len(d.Migrate) > 0 {
		yes := true
		cmd := &AllocTransitionCommand{Transitions: map[string]structs.DesiredTransition{}}
		seen := map[structs.NamespacedID]bool{}
		for _, a := range d.Migrate {
			cmd.Transitions[a.ID] = structs.DesiredTransition{Migrate: &yes}
			k := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
			if seen[k] {
				continue
			}
			seen[k] = true
			e := &structs.Evaluation{
				ID: structs.GenerateUUID(), Namespace: a.Namespace, JobID: a.JobID,
				TriggeredBy: structs.EvalTriggerNodeDrain, NodeID: node.ID, Status: structs.EvalStatusPending,
				CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
			}
			if a.Job != nil {
				e.Priority, e.Type = a.Job.Priority, a.Job.Type
			}
			cmd.Evals = append(cmd.Evals, e)
		}
		s.logger.Info("drain: migrating allocations", "node_id", node.ID, "allocs", len(d.Migrate))
		if _, _, err := s.raftApply(AllocDesiredTransitionRequestType, cmd); err != nil {
			return fmt.Errorf("mark %d allocations to migrate: %w", len(d.Migrate), err)
		}
		return nil // done is decided on a later pass, once they are stopped
	}
	if !d.Done {
		return nil
	}
	last := node.LastDrain.Copy()
	if last == nil {
		last = &structs.DrainMetadata{StartedAt: node.DrainStrategy.StartedAt}
	}
	last.UpdatedAt, last.Status = now.UTC(), structs.DrainStatusComplete
	s.logger.Info("drain complete", "node_id", node.ID)
	_, _, err := s.raftApply(NodeUpdateDrainRequestType, &NodeDrainCommand{Update: state.NodeDrainUpdate{
		NodeID: node.ID, SetDrain: true, LastDrain: last,
		Event: &structs.NodeEvent{Message: structs.NodeEventDrainComplete, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now.UTC()},
	}})
	if err != nil {
		return fmt.Errorf("end the drain: %w", err)
	}
	return nil
}
