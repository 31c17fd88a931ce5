package server

import (
	"context"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The plan applier commits plans in the order they come, each checked
// against the state every plan before it produced, and keeps one raft
// entry committing while it checks the plans that come meanwhile: those
// are checked against the state plus what the entry in flight and the
// plans before them in the batch write (planView), and committed
// together in the next entry once the one in flight is committed. With
// several servers a commit is a round trip to a majority; committing one
// plan per round trip and checking the next only after it (as this
// applier did before) made every plan wait for every commit ahead of it.
//
// Correctness: a plan's check holds for the entry that commits it,
// because that entry is proposed only after the one in flight committed,
// and the state then is exactly what the check assumed (no other writer
// changes allocations or deployments but plans, and any other write that
// lands between can only be one a single serial applier also raced).
// When the entry in flight fails, nothing it held was written: the batch
// checked against it is checked again on the state as it is, so no plan
// counts room that an uncommitted plan freed. A failed entry fails only
// its own plans.

// maxPlanBatch bounds the plans in one raft entry, and maxBatchAllocs its
// allocations (a plan result encodes to about 5.5 kB per allocation:
// BenchmarkProposal).
const (
	maxPlanBatch   = 32
	maxBatchAllocs = 2000
)

// planCommitter proposes a plan result command to raft; wait returns its
// index once it is committed and applied, or why not.
type planCommitter func(cmd *PlanResultCommand) (wait func() (uint64, error), err error)

// raftPlanCommitter is the server's planCommitter. The proposal waits for
// raft to take it however long that takes (no enqueue timeout), so that
// entries reach the log in the order proposed.
func (s *Server) raftPlanCommitter(cmd *PlanResultCommand) (func() (uint64, error), error) {
	f, err := s.raftPropose(ApplyPlanResultsRequestType, normalizePlanResult(cmd), 0)
	if err != nil {
		return nil, err
	}
	return func() (uint64, error) {
		index, _, err := raftResult(ApplyPlanResultsRequestType, f)
		return index, err
	}, nil
}

// planApplier is the leader's plan applier (runPlanApplier). It is used by
// its run goroutine only.
type planApplier struct {
	s      *Server
	queue  <-chan *pendingPlan
	commit planCommitter
	// inflight is the batch whose raft entry is committing, nil if none.
	inflight *planBatch
	// held was taken from the queue but touches what the batch being
	// gathered writes: it starts the next batch.
	held *pendingPlan
	// lastIndex is the index of the last entry committed; lastFailed says
	// that the last entry proposed failed.
	lastIndex  uint64
	lastFailed bool
}

// planBatch is the plans committed in one raft entry.
type planBatch struct {
	view    *planView
	plans   []*checkedPlan
	cmd     PlanResultCommand
	touched map[string]bool // IDs of the allocations, evaluations and deployments it writes
	started time.Time       // when it was proposed
	done    chan commitResult
}

// commitResult is the outcome of a batch's raft entry.
type commitResult struct {
	index uint64
	err   error
}

// runPlanApplier applies the submitted plans until the server stops.
func (s *Server) runPlanApplier() {
	a := &planApplier{s: s, queue: s.planQueue, commit: s.raftPlanCommitter}
	a.run(s.ctx)
}

// run applies plans until ctx ends; every plan it took is answered.
func (a *planApplier) run(ctx context.Context) {
	defer a.stop()
	for {
		p := a.held
		a.held = nil
		if p == nil {
			var done chan commitResult
			if a.inflight != nil {
				done = a.inflight.done
			}
			select {
			case <-ctx.Done():
				return
			case r := <-done:
				a.finish(r)
				continue
			case p = <-a.queue:
				a.s.config.Timers.MeasureSince(timerPlanQueue, p.submitted)
			}
		}
		b := a.newBatch()
		b.add(a.s, p)
		// Gather the plans that come while the entry ahead commits.
		for a.inflight != nil && a.held == nil && !b.full() {
			select {
			case <-ctx.Done():
				b.fail(a.stopping())
				return
			case r := <-a.inflight.done:
				a.finish(r)
			case q := <-a.queue:
				a.s.config.Timers.MeasureSince(timerPlanQueue, q.submitted)
				if b.collides(q) {
					a.held = q
				} else {
					b.add(a.s, q)
				}
			}
		}
		if a.inflight != nil {
			a.finish(<-a.inflight.done)
		}
		if a.lastFailed {
			// Checked against an entry that was not written: check
			// again on the state as it is.
			b = a.recheck(b)
		}
		a.propose(b)
	}
}

// newBatch starts a batch on the latest state with the entry in flight
// laid over it.
func (a *planApplier) newBatch() *planBatch {
	v := &planView{st: a.s.fsm.State().Snapshot(), ov: newPlanOverlay()}
	if a.inflight != nil {
		v.ov.add(&a.inflight.cmd)
	}
	return &planBatch{view: v, touched: map[string]bool{}}
}

// recheck checks b's plans again, in order, on the latest state alone.
func (a *planApplier) recheck(b *planBatch) *planBatch {
	nb := a.newBatch()
	for _, c := range b.plans {
		nb.add(a.s, c.p)
	}
	return nb
}

// propose hands b's entry to raft, or answers its plans at once when it
// writes nothing.
func (a *planApplier) propose(b *planBatch) {
	a.lastFailed = false
	if len(b.cmd.Allocs) == 0 && len(b.cmd.Evals) == 0 && len(b.cmd.Deployments) == 0 {
		// Rejected whole, or nothing to do: the worker schedules again on
		// state at least as new as what the check saw.
		b.answer(commitResult{index: max(b.view.st.LatestIndex(), a.lastIndex)})
		return
	}
	b.started = time.Now()
	wait, err := a.commit(&b.cmd)
	if err != nil {
		b.answer(commitResult{err: err})
		return
	}
	b.done = make(chan commitResult, 1)
	a.inflight = b
	// Owned by the applier, which receives its one result (finish) before
	// it returns; raft answers every proposal, on shutdown too.
	go func() {
		index, err := wait()
		b.done <- commitResult{index: index, err: err}
	}()
}

// finish answers the plans of the entry in flight with its outcome r.
func (a *planApplier) finish(r commitResult) {
	b := a.inflight
	a.inflight = nil
	a.s.config.Timers.MeasureSince(timerPlanApply, b.started)
	a.lastFailed = r.err != nil
	if r.err == nil {
		a.lastIndex = max(a.lastIndex, r.index)
		now := a.s.clock.Now()
		for _, c := range b.plans {
			a.s.markPlaced(c.placed, now)
		}
	}
	b.answer(r)
}

// stop answers every plan the applier holds when it stops: the batch in
// flight with its outcome, a held plan with an error.
func (a *planApplier) stop() {
	if a.inflight != nil {
		a.finish(<-a.inflight.done)
	}
	if a.held != nil {
		a.held.respCh <- planResult{Err: a.stopping()}
		a.held = nil
	}
}

func (a *planApplier) stopping() error {
	return structs.NewError(structs.KindUnavailable, "server %s is stopping: plan not applied", a.s.config.NodeName)
}

// add checks p against the state plus what the batch writes so far, and
// adds it to the batch.
func (b *planBatch) add(s *Server, p *pendingPlan) {
	c := s.checkPlan(b.view, p)
	b.plans = append(b.plans, c)
	if c.res.Err != nil {
		return
	}
	b.cmd.Allocs = append(b.cmd.Allocs, c.cmd.Allocs...)
	b.cmd.Evals = append(b.cmd.Evals, c.cmd.Evals...)
	b.cmd.Deployments = append(b.cmd.Deployments, c.cmd.Deployments...)
	b.view.ov.add(&c.cmd)
	for _, a := range c.cmd.Allocs {
		b.touched[a.ID] = true
	}
	for _, e := range c.cmd.Evals {
		b.touched[e.ID] = true
	}
	for _, d := range c.cmd.Deployments {
		b.touched[d.ID] = true
	}
}

// full reports whether the batch takes no more plans.
func (b *planBatch) full() bool {
	return len(b.plans) >= maxPlanBatch || len(b.cmd.Allocs) >= maxBatchAllocs
}

// collides reports whether p would write an allocation, evaluation or
// deployment the batch writes: one raft entry holds one version of each,
// so p waits for the next entry.
func (b *planBatch) collides(p *pendingPlan) bool {
	plan := p.plan
	for _, m := range []map[string][]*structs.Allocation{plan.NodeAllocation, plan.NodeUpdate, plan.NodePreemptions} {
		for _, allocs := range m {
			for _, a := range allocs {
				if b.touched[a.ID] {
					return true
				}
			}
		}
	}
	for _, a := range plan.AllocUpdates {
		if b.touched[a.ID] {
			return true
		}
	}
	for _, e := range p.evals {
		if b.touched[e.ID] {
			return true
		}
	}
	for _, d := range plan.Deployments {
		if b.touched[d.ID] {
			return true
		}
	}
	return false
}

// answer sends each plan of the batch its result, given the outcome of
// the batch's entry.
func (b *planBatch) answer(r commitResult) {
	for _, c := range b.plans {
		res := c.res
		switch {
		case res.Err != nil:
		case r.err != nil:
			res = planResult{Err: fmt.Errorf("commit plan of eval %q: %w", c.p.plan.EvalID, r.err)}
		default:
			if c.writes() {
				res.Index = r.index
			}
			if res.Rejected {
				res.RefreshIndex = r.index
			}
		}
		c.p.respCh <- res
	}
}

// fail answers each plan of a batch that will not be proposed.
func (b *planBatch) fail(err error) {
	for _, c := range b.plans {
		c.p.respCh <- planResult{Err: err}
	}
}

// planView is the state a plan is checked against: a snapshot, with what
// the plans ahead of it write (not yet committed) laid over it.
type planView struct {
	st *state.StateSnapshot
	ov *planOverlay
}

// planOverlay is what the plans ahead of a plan write: the newest version
// of each allocation and deployment.
type planOverlay struct {
	allocs      map[string]*structs.Allocation
	byNode      map[string][]string // allocation IDs in allocs, by node
	deployments map[string]*structs.Deployment
}

func newPlanOverlay() *planOverlay {
	return &planOverlay{allocs: map[string]*structs.Allocation{}, byNode: map[string][]string{},
		deployments: map[string]*structs.Deployment{}}
}

// add lays what cmd writes over the overlay.
func (o *planOverlay) add(cmd *PlanResultCommand) {
	for _, a := range cmd.Allocs {
		if _, ok := o.allocs[a.ID]; !ok {
			o.byNode[a.NodeID] = append(o.byNode[a.NodeID], a.ID)
		}
		o.allocs[a.ID] = a
	}
	for _, d := range cmd.Deployments {
		o.deployments[d.ID] = d
	}
}

// AllocByID returns an allocation as the plans ahead leave it.
func (v *planView) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	if a, ok := v.ov.allocs[id]; ok {
		return a, nil
	}
	return v.st.AllocByID(ws, id)
}

// AllocsByNode returns a node's allocations as the plans ahead leave them.
func (v *planView) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	stored, err := v.st.AllocsByNode(ws, nodeID)
	if err != nil {
		return nil, err
	}
	if len(v.ov.allocs) == 0 {
		return stored, nil
	}
	out := make([]*structs.Allocation, 0, len(stored)+len(v.ov.byNode[nodeID]))
	seen := map[string]bool{}
	for _, a := range stored {
		if o, ok := v.ov.allocs[a.ID]; ok {
			a = o
		}
		seen[a.ID] = true
		out = append(out, a)
	}
	for _, id := range v.ov.byNode[nodeID] {
		if !seen[id] {
			seen[id] = true
			out = append(out, v.ov.allocs[id])
		}
	}
	return out, nil
}

// DeploymentByID returns a deployment as the plans ahead leave it.
func (v *planView) DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	if d, ok := v.ov.deployments[id]; ok {
		return d, nil
	}
	return v.st.DeploymentByID(ws, id)
}

// normalizePlanResult returns cmd with each job carried once: the
// allocations that share their job (the same object) with an earlier
// allocation of the entry are copied without it, the job goes in Jobs
// and AllocJobs says whose it is. Every allocation of a plan points at
// the plan's job, and the job is most of an allocation's encoding:
// without this each server decoded it once per allocation. cmd is not
// changed.
func normalizePlanResult(cmd *PlanResultCommand) *PlanResultCommand {
	out := *cmd
	out.Allocs = make([]*structs.Allocation, len(cmd.Allocs))
	out.AllocJobs = make([]int, len(cmd.Allocs))
	index := map[*structs.Job]int{}
	for i, a := range cmd.Allocs {
		out.Allocs[i] = a
		if a.Job == nil {
			continue
		}
		n, ok := index[a.Job]
		if !ok {
			out.Jobs = append(out.Jobs, a.Job)
			n = len(out.Jobs)
			index[a.Job] = n
		}
		c := *a
		c.Job = nil
		out.Allocs[i] = &c
		out.AllocJobs[i] = n
	}
	if len(out.Jobs) == 0 {
		out.AllocJobs = nil
	}
	return &out
}

// denormalizePlanResult gives each allocation sent without its job the
// job back (normalizePlanResult). The allocations of a job then share
// one job object, read-only like everything in the state store.
func denormalizePlanResult(cmd *PlanResultCommand) error {
	if len(cmd.Jobs) == 0 {
		return nil
	}
	if len(cmd.AllocJobs) != len(cmd.Allocs) {
		return fmt.Errorf("plan result names the jobs of %d allocations, holds %d", len(cmd.AllocJobs), len(cmd.Allocs))
	}
	for i, n := range cmd.AllocJobs {
		if n < 0 || n > len(cmd.Jobs) {
			return fmt.Errorf("plan result allocation %d names job %d of %d", i, n, len(cmd.Jobs))
		}
		if n > 0 {
			cmd.Allocs[i].Job = cmd.Jobs[n-1]
		}
	}
	cmd.Jobs, cmd.AllocJobs = nil, nil
	return nil
}
