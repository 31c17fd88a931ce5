package server

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// Defaults of the garbage collection settings (as Nomad's).
const (
	DefaultJobGCInterval         = 5 * time.Minute
	DefaultJobGCThreshold        = 4 * time.Hour
	DefaultEvalGCThreshold       = time.Hour
	DefaultBatchEvalGCThreshold  = 24 * time.Hour
	DefaultDeploymentGCThreshold = time.Hour
	DefaultNodeGCThreshold       = 24 * time.Hour
)

// gcBatchSize bounds the objects one GC raft entry deletes.
const gcBatchSize = 2000

// GCConfig is the servers' garbage collection (the agent's server block).
// Zero values use the defaults above.
type GCConfig struct {
	// Interval is how often the leader collects (job_gc_interval).
	Interval time.Duration
	// JobThreshold is how long a dead job stays (job_gc_threshold).
	JobThreshold time.Duration
	// EvalThreshold is how long a terminal evaluation of a service or
	// system job stays (eval_gc_threshold).
	EvalThreshold time.Duration
	// BatchEvalThreshold is the same for batch jobs
	// (batch_eval_gc_threshold).
	BatchEvalThreshold time.Duration
	// DeploymentThreshold is how long a finished deployment stays
	// (deployment_gc_threshold).
	DeploymentThreshold time.Duration
	// NodeThreshold is how long a down node without work stays
	// (node_gc_threshold).
	NodeThreshold time.Duration
}

func (c GCConfig) withDefaults() GCConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Interval, DefaultJobGCInterval)
	def(&c.JobThreshold, DefaultJobGCThreshold)
	def(&c.EvalThreshold, DefaultEvalGCThreshold)
	def(&c.BatchEvalThreshold, DefaultBatchEvalGCThreshold)
	def(&c.DeploymentThreshold, DefaultDeploymentGCThreshold)
	def(&c.NodeThreshold, DefaultNodeGCThreshold)
	return c
}

// gcCutoffs are the times (and, for deployments, which carry no time, the
// raft index) before which an object is old enough to collect.
type gcCutoffs struct {
	Job, Eval, BatchEval, Node time.Time
	DeploymentIndex            uint64
}

// gcReader is what the garbage selection reads.
type gcReader interface {
	Jobs(ws memdb.WatchSet) ([]*structs.Job, error)
	Evals(ws memdb.WatchSet) ([]*structs.Evaluation, error)
	Allocs(ws memdb.WatchSet) ([]*structs.Allocation, error)
	Deployments(ws memdb.WatchSet) ([]*structs.Deployment, error)
	Nodes(ws memdb.WatchSet) ([]*structs.Node, error)
}

// selectGarbage is the collector's pure decision: what is old and
// finished enough to delete.
//
//   - A job is collected with all its evaluations, allocations and
//     deployments when it is stopped, or a batch job that is dead, and
//     nothing of it has run or changed since the job cutoff.
//   - A terminal evaluation older than its cutoff (the batch one for
//     batch jobs) is collected with its allocations once they are all
//     finished on their clients and older than the cutoff too, and none
//     still stands for its group: an allocation whose job lives on is
//     collected only when the servers stopped it or replaced it, never a
//     failed one not replaced or a completed batch one, which the
//     scheduler would otherwise run again.
//   - A finished deployment modified before the deployment cutoff is
//     collected unless it is its live job's latest.
//   - A down node without allocations still running is collected once it
//     has been down since the node cutoff.
func selectGarbage(r gcReader, c gcCutoffs) (*state.Garbage, error) {
	g := &state.Garbage{}
	jobs, err := r.Jobs(nil)
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	evals, err := r.Evals(nil)
	if err != nil {
		return nil, fmt.Errorf("read evaluations: %w", err)
	}
	allocs, err := r.Allocs(nil)
	if err != nil {
		return nil, fmt.Errorf("read allocations: %w", err)
	}
	deps, err := r.Deployments(nil)
	if err != nil {
		return nil, fmt.Errorf("read deployments: %w", err)
	}
	nodes, err := r.Nodes(nil)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	jobByKey := make(map[structs.NamespacedID]*structs.Job, len(jobs))
	for _, j := range jobs {
		jobByKey[j.NamespacedID()] = j
	}
	evalsOf := map[structs.NamespacedID][]*structs.Evaluation{}
	for _, e := range evals {
		k := structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
		evalsOf[k] = append(evalsOf[k], e)
	}
	allocsOf := map[structs.NamespacedID][]*structs.Allocation{}
	allocsByEval := map[string][]*structs.Allocation{}
	liveOnNode := map[string]bool{}
	for _, a := range allocs {
		k := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
		allocsOf[k] = append(allocsOf[k], a)
		allocsByEval[a.EvalID] = append(allocsByEval[a.EvalID], a)
		if !a.ClientTerminalStatus() {
			liveOnNode[a.NodeID] = true
		}
	}
	depsOf := map[structs.NamespacedID][]*structs.Deployment{}
	for _, d := range deps {
		k := structs.NamespacedID{Namespace: d.Namespace, ID: d.JobID}
		depsOf[k] = append(depsOf[k], d)
	}

	// Jobs, with everything of theirs.
	gone := map[structs.NamespacedID]bool{}
	for _, j := range jobs {
		k := j.NamespacedID()
		if !jobCollectable(j, evalsOf[k], allocsOf[k], c.Job) {
			continue
		}
		gone[k] = true
		g.Jobs = append(g.Jobs, k)
		for _, e := range evalsOf[k] {
			g.Evals = append(g.Evals, e.ID)
		}
		for _, a := range allocsOf[k] {
			g.Allocs = append(g.Allocs, a.ID)
		}
		for _, d := range depsOf[k] {
			g.Deployments = append(g.Deployments, d.ID)
		}
	}

	// Evaluations, with their allocations.
	for _, e := range evals {
		k := structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
		if gone[k] || !e.TerminalStatus() {
			continue
		}
		cutoff := c.Eval
		if e.Type == structs.JobTypeBatch {
			cutoff = c.BatchEval
		}
		if time.Unix(0, e.ModifyTime).After(cutoff) {
			continue
		}
		job := jobByKey[k]
		ok := true
		for _, a := range allocsByEval[e.ID] {
			if !allocCollectable(a, job, cutoff) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		g.Evals = append(g.Evals, e.ID)
		for _, a := range allocsByEval[e.ID] {
			g.Allocs = append(g.Allocs, a.ID)
		}
	}

	// Deployments.
	for k, ds := range depsOf {
		if gone[k] {
			continue
		}
		var latest *structs.Deployment
		if jobByKey[k] != nil {
			for _, d := range ds {
				if latest == nil || d.CreateIndex > latest.CreateIndex {
					latest = d
				}
			}
		}
		for _, d := range ds {
			if d == latest || d.Active() || d.Status == "" || d.ModifyIndex > c.DeploymentIndex {
				continue
			}
			g.Deployments = append(g.Deployments, d.ID)
		}
	}

	// Nodes.
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown || liveOnNode[n.ID] || time.Unix(n.StatusUpdatedAt, 0).After(c.Node) {
			continue
		}
		g.Nodes = append(g.Nodes, n.ID)
	}
	sort.Strings(g.Evals)
	sort.Strings(g.Allocs)
	sort.Strings(g.Deployments)
	sort.Strings(g.Nodes)
	return g, nil
}

// jobCollectable reports whether job is finished (stopped, or a dead
// batch job), everything of it terminal, and nothing of it changed after
// cutoff.
func jobCollectable(j *structs.Job, evals []*structs.Evaluation, allocs []*structs.Allocation, cutoff time.Time) bool {
	if !j.Stop && !(j.Type == structs.JobTypeBatch && j.Status == structs.JobStatusDead) {
		return false
	}
	if time.Unix(0, j.SubmitTime).After(cutoff) {
		return false
	}
	for _, e := range evals {
		if !e.TerminalStatus() || time.Unix(0, e.ModifyTime).After(cutoff) {
			return false
		}
	}
	for _, a := range allocs {
		if !a.ClientTerminalStatus() || time.Unix(0, a.ModifyTime).After(cutoff) {
			return false
		}
	}
	return true
}

// allocCollectable reports whether a may go with its evaluation: finished
// on its client before cutoff, and (while its job lives) stopped or
// replaced by the servers.
func allocCollectable(a *structs.Allocation, job *structs.Job, cutoff time.Time) bool {
	if !a.ClientTerminalStatus() || time.Unix(0, a.ModifyTime).After(cutoff) {
		return false
	}
	if job == nil || job.Stop {
		return true
	}
	return a.ServerTerminalStatus() || a.NextAllocation != "" ||
		(a.Job != nil && a.Job.Version < job.Version)
}

// gcTimeTable maps raft indexes to the times the collector saw them, so
// that objects carrying only an index (deployments) can be aged.
type gcTimeTable struct {
	mu      sync.Mutex // guards the field below
	entries []gcTime   // oldest first
}

type gcTime struct {
	index uint64
	at    time.Time
}

// maxGCTimes bounds the table: a day of the default 5-minute interval
// four times over.
const maxGCTimes = 1152

// witness records that index was current at at.
func (t *gcTimeTable) witness(index uint64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.entries); n > 0 && t.entries[n-1].index >= index {
		return
	}
	t.entries = append(t.entries, gcTime{index, at})
	if len(t.entries) > maxGCTimes {
		t.entries = t.entries[len(t.entries)-maxGCTimes:]
	}
}

// indexAt returns the newest index witnessed at or before at; 0 when none
// is known that old.
func (t *gcTimeTable) indexAt(at time.Time) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var idx uint64
	for _, e := range t.entries {
		if e.at.After(at) {
			break
		}
		idx = e.index
	}
	return idx
}

// runGC is the leader's garbage collector: every GC interval (on the
// server's clock) it deletes what selectGarbage finds old enough.
func (s *Server) runGC() {
	for {
		wake := make(chan struct{}, 1)
		timer := s.clock.AfterFunc(s.gcConfig.Interval, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		s.gcTimes.witness(s.fsm.State().LatestIndex(), s.clock.Now())
		select {
		case <-s.ctx.Done():
			timer.Stop()
			return
		case <-wake:
		}
		if !s.leader() {
			continue
		}
		if _, err := s.collectGarbage(s.ctx, false); err != nil {
			s.logger.Error("garbage collection", "error", err)
		}
	}
}

// collectGarbage deletes what is old enough by the thresholds, or with
// force everything finished whatever its age, and returns how many
// objects it deleted.
func (s *Server) collectGarbage(ctx context.Context, force bool) (int, error) {
	now := s.clock.Now()
	st := s.fsm.State()
	cfg := s.gcConfig
	c := gcCutoffs{
		Job: now.Add(-cfg.JobThreshold), Eval: now.Add(-cfg.EvalThreshold),
		BatchEval: now.Add(-cfg.BatchEvalThreshold), Node: now.Add(-cfg.NodeThreshold),
		DeploymentIndex: s.gcTimes.indexAt(now.Add(-cfg.DeploymentThreshold)),
	}
	if force {
		c = gcCutoffs{Job: now, Eval: now, BatchEval: now, Node: now, DeploymentIndex: st.LatestIndex()}
	}
	g, err := selectGarbage(st, c)
	if err != nil {
		return 0, err
	}
	total := len(g.Evals) + len(g.Allocs) + len(g.Jobs) + len(g.Deployments) + len(g.Nodes)
	if total == 0 {
		return 0, nil
	}
	for _, cmd := range splitGarbage(g, gcBatchSize) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if _, _, err := s.raftApply(GCRequestType, cmd); err != nil {
			return 0, fmt.Errorf("apply garbage collection: %w", err)
		}
	}
	s.logger.Info("garbage collected", "jobs", len(g.Jobs), "evals", len(g.Evals), "allocs", len(g.Allocs),
		"deployments", len(g.Deployments), "nodes", len(g.Nodes), "forced", force)
	return total, nil
}

// splitGarbage cuts g into commands of at most n objects each, in the
// order evaluations, allocations, deployments, jobs, nodes (a job goes
// after its work, so an interrupted collection leaves no orphans).
func splitGarbage(g *state.Garbage, n int) []*GCCommand {
	var out []*GCCommand
	cur := &GCCommand{}
	size := 0
	flush := func() {
		if size > 0 {
			out = append(out, cur)
			cur, size = &GCCommand{}, 0
		}
	}
	add := func(f func()) {
		f()
		size++
		if size >= n {
			flush()
		}
	}
	for _, id := range g.Evals {
		add(func() { cur.Evals = append(cur.Evals, id) })
	}
	for _, id := range g.Allocs {
		add(func() { cur.Allocs = append(cur.Allocs, id) })
	}
	for _, id := range g.Deployments {
		add(func() { cur.Deployments = append(cur.Deployments, id) })
	}
	for _, k := range g.Jobs {
		add(func() { cur.Jobs = append(cur.Jobs, k) })
	}
	for _, id := range g.Nodes {
		add(func() { cur.Nodes = append(cur.Nodes, id) })
	}
	flush()
	return out
}

// SystemGC collects everything finished now, whatever its age (system
// gc, PUT /v1/system/gc).
func (s *Server) SystemGC(ctx context.Context, req *structs.SystemRequest) (*structs.GenericResponse, error) {
	if _, err := s.collectGarbage(ctx, true); err != nil {
		return nil, err
	}
	return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: max(s.fsm.State().LatestIndex(), 1)}}, nil
}

// SystemReconcileSummaries recomputes every job's summary from its
// allocations (system reconcile summaries).
func (s *Server) SystemReconcileSummaries(ctx context.Context, req *structs.SystemRequest) (*structs.GenericResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	index, _, err := s.raftApply(GCRequestType, &GCCommand{ReconcileSummaries: true})
	if err != nil {
		return nil, err
	}
	return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: index}}, nil
}
