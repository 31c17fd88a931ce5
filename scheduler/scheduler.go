package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// Descriptions set on stopped allocations.
const (
	descJobStopped = "alloc not needed since job was stopped"
	descNotNeeded  = "alloc not needed due to job update"
	descUpdating   = "alloc is being updated due to job update"
	descLost       = "alloc is lost since its node is down"
	descMigrating  = "alloc is being migrated"
	descNodeGone   = "alloc not needed as node is no longer eligible"
)

// Options are the scheduler's sources of time and identity, and what can
// interrupt it. The zero value uses the wall clock and random UUIDs and
// runs to the end.
type Options struct {
	// Context, when set, interrupts Process: it is checked before each
	// placement, and once it is done Process returns an error wrapping
	// context.Cause(Context). A worker sets its evaluation's deadline
	// here, JobPlan its caller's request.
	Context context.Context
	// Now returns the current time, stamped on new and stopped allocations.
	Now func() time.Time
	// NewID returns a new allocation ID.
	NewID func() string
	// NewDeploymentID returns a new deployment ID; nil uses NewID.
	NewDeploymentID func() string
	// NewEvalID returns a new evaluation ID (follow-up evaluations); nil
	// uses NewID.
	NewEvalID func() string

	// Rand picks dynamic ports (ports.go); nil seeds one from the
	// evaluation's ID, so that the same evaluation picks the same ports.
	Rand *rand.Rand

	// exhaustive makes every placement consider every node, as the
	// sampling placer's reference in tests.
	exhaustive bool
}

// Process processes eval against state with default Options.
func Process(state State, eval *structs.Evaluation) (*Plan, error) {
	return Options{}.Process(state, eval)
}

// Process reconciles the evaluation's job against its allocations and
// returns the plan that converges them. It reads state only.
func (o Options) Process(state State, eval *structs.Evaluation) (*Plan, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = structs.GenerateUUID
	}
	if o.NewDeploymentID == nil {
		o.NewDeploymentID = o.NewID
	}
	if o.NewEvalID == nil {
		o.NewEvalID = o.NewID
	}
	job, err := state.JobByID(eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", eval.JobID, err)
	}
	allocs, err := state.AllocsByJob(eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of job %q: %w", eval.JobID, err)
	}
	sortAllocs(allocs)
	nodes, err := state.ReadyNodes()
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	byID := func(a, b *structs.Node) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(nodes, byID) { // the state store's are
		nodes = slices.Clone(nodes)
		slices.SortFunc(nodes, byID)
	}

	cfg, err := state.SchedulerConfig()
	if err != nil {
		return nil, fmt.Errorf("read scheduler configuration: %w", err)
	}
	if cfg == nil {
		cfg = structs.DefaultSchedulerConfiguration()
	}
	r := &run{
		ctx:             o.Context,
		state:           state,
		eval:            eval,
		job:             job,
		allocs:          allocs,
		nodes:           nodes,
		plan:            newPlan(eval, job),
		now:             o.Now().UnixNano(),
		newID:           o.NewID,
		newDeploymentID: o.NewDeploymentID,
		newEvalID:       o.NewEvalID,
		rescheduling:    map[string]time.Duration{},
		checker:         newConstraintChecker(),
		config:          cfg,
		usages:          map[string]*nodeUsage{},
		feasibilities:   map[*structs.TaskGroup]*feasibility{},
		classes:         map[string]string{},
		regexps:         map[string]*regexp.Regexp{},
		exhaustive:      o.exhaustive,
		rng:             o.Rand,
		tieSeed:         tieSeed(eval.ID),
	}
	if r.rng == nil {
		r.rng = evalRand(eval) // ports.go
	}
	if job != nil {
		for _, tg := range job.TaskGroups {
			r.plan.QueuedAllocations[tg.Name] = 0
		}
	}
	jobType := eval.Type
	if job != nil {
		jobType = job.Type
	}
	if job == nil || job.Stop || job.IsTemplate() {
		// A periodic or parameterized job is a template: its children
		// run, never the job itself.
		r.stopAll()
		if err := r.cancelDeployment(eval.Namespace, eval.JobID); err != nil {
			return nil, err
		}
		return r.plan, nil
	}
	if jobType == structs.JobTypeSystem || jobType == structs.JobTypeSysBatch {
		err = r.system()
	} else {
		err = r.generic()
	}
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, err
	}
	return r.plan, nil
}

// run is the working state of one Process call.
type run struct {
	ctx     context.Context // nil: never interrupted
	state   State
	eval    *structs.Evaluation
	job     *structs.Job // nil when purged
	allocs  []*structs.Allocation
	nodes   []*structs.Node // ready nodes, by ID
	plan    *Plan
	now     int64
	newID   func() string
	checker *constraintChecker

	newDeploymentID func() string
	newEvalID       func() string
	// rescheduling holds the failed allocations replaced in this plan, by
	// ID, with the delay that preceded their replacement.
	rescheduling map[string]time.Duration
	config       *structs.SchedulerConfiguration
	deps         deploymentRun
	// canary, while canaries are placed, is their group's deployment
	// state: newAllocation marks each placement a canary and lists it
	// there (canary.go).
	canary *structs.DeploymentState
	// err is the first state read error met where returning one is awkward.
	err error

	exhaustive bool // Options.exhaustive

	// Per-run caches (placer.go, rank.go, feasible.go).
	usages        map[string]*nodeUsage // by node ID
	feasibilities map[*structs.TaskGroup]*feasibility
	classes       map[string]string         // computed classes of nodes that lack one, by ID
	regexps       map[string]*regexp.Regexp // compiled device constraint patterns
	cands         []*structs.Node           // candidate nodes, by ID; nil until computed
	candByID      map[string]*structs.Node
	order         *visitOrder           // cands in visiting order (placer.go)
	pool          *structs.AllocMetric  // NodesInPool and NodesAvailable of cands
	ports         map[string]*portCache // ports held, by node ID (ports.go)
	rng           *rand.Rand            // picks dynamic ports
	tieSeed       uint64                // seeds the tie keys of candidates (candidates.go)
}

// interrupted returns an error once the run's context is done.
func (r *run) interrupted() error {
	if r.ctx == nil || r.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("scheduling interrupted: %w", context.Cause(r.ctx))
}

// nowTime returns the run's clock reading as a time.
func (r *run) nowTime() time.Time { return time.Unix(0, r.now) }

// sortAllocs orders allocations oldest first, so that choices among them
// are deterministic.
func sortAllocs(allocs []*structs.Allocation) {
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex < allocs[j].CreateIndex
		}
		return allocs[i].ID < allocs[j].ID
	})
}

// stopAll stops every allocation the server still wants running: the job
// was stopped or purged.
func (r *run) stopAll() {
	for _, a := range r.allocs {
		if !a.ServerTerminalStatus() {
			r.plan.AppendStop(a, descJobStopped, r.now)
		}
	}
}

// oldVersion reports whether a was placed for an earlier version of the job.
func (r *run) oldVersion(a *structs.Allocation) bool {
	return a.Job == nil || a.Job.JobModifyIndex != r.job.JobModifyIndex
}

// destructive reports whether moving a to the current job version needs a
// new allocation (see tasksUpdated and jobUpdated).
func (r *run) destructive(a *structs.Allocation) bool {
	if a.Job == nil {
		return true
	}
	og, ng := a.Job.LookupTaskGroup(a.TaskGroup), r.job.LookupTaskGroup(a.TaskGroup)
	if og == nil || ng == nil {
		return true
	}
	return jobUpdated(a.Job, r.job) || tasksUpdated(og, ng)
}

// servicesChanged reports whether moving a to the current job version
// changes its services or checks (servicesUpdated).
func (r *run) servicesChanged(a *structs.Allocation) bool {
	if a.Job == nil {
		return true
	}
	return servicesUpdated(a.Job.LookupTaskGroup(a.TaskGroup), r.job.LookupTaskGroup(a.TaskGroup))
}

// updateInPlace adds to the plan a copy of a that runs the current job
// version on the same node, as part of deployment deploymentID ("" when
// none). An allocation that joins another deployment than its own loses
// its health verdict: its client watches its health again for the new
// version and reports it (as Nomad).
func (r *run) updateInPlace(a *structs.Allocation, deploymentID string) {
	c := a.Copy()
	c.Job = r.job
	c.EvalID = r.eval.ID
	c.ModifyTime = r.now
	if c.DeploymentID != deploymentID {
		c.DeploymentID = deploymentID
		c.DeploymentStatus = nil
	}
	r.plan.AppendAlloc(c)
}

// candidateNodes returns the ready nodes in the job's node pool and
// datacenters, by ID,
// computing them and their pool counts once per run.
func (r *run) candidateNodes() []*structs.Node {
	if r.pool != nil {
		return r.cands
	}
	r.pool = &structs.AllocMetric{}
	r.cands = make([]*structs.Node, 0, len(r.nodes))
	for _, n := range r.nodes {
		if !inDatacenters(n.Datacenter, r.job.Datacenters) || !structs.InNodePool(n.NodePool, r.job.NodePool) {
			continue
		}
		r.cands = append(r.cands, n)
		if r.pool.NodesAvailable == nil {
			r.pool.NodesAvailable = map[string]int{}
		}
		r.pool.NodesAvailable[n.Datacenter]++
	}
	r.pool.NodesInPool = len(r.cands)
	return r.cands
}

// freshMetric returns a metric carrying only the pool counts. Its
// NodesAvailable map is shared: metrics are read-only once made.
func (r *run) freshMetric() *structs.AllocMetric {
	r.candidateNodes()
	return &structs.AllocMetric{NodesInPool: r.pool.NodesInPool, NodesAvailable: r.pool.NodesAvailable}
}

// newAllocation returns a new allocation of tg named name on node, with
// the given devices and ports. deploymentID tags a replacement made by a
// rolling update; prev is the allocation it replaces, if any.
func (r *run) newAllocation(tg *structs.TaskGroup, name string, node *structs.Node,
	devices map[string][]*structs.AllocatedDeviceResource, ports *portAssignment, metric *structs.AllocMetric, deploymentID string, prev *structs.Allocation) *structs.Allocation {
	ask := newAllocResources(r.job, tg) // each allocation owns its resources
	a := &structs.Allocation{
		ID:                 r.newID(),
		DeploymentID:       deploymentID,
		Namespace:          r.job.Namespace,
		EvalID:             r.eval.ID,
		Name:               name,
		NodeID:             node.ID,
		NodeName:           node.Name,
		JobID:              r.job.ID,
		Job:                r.job,
		TaskGroup:          tg.Name,
		Resources:          ask.total,
		TaskResources:      ask.tasks,
		AllocatedResources: withPorts(withDevices(ask.allocated, devices), ports), // ports.go
		Metrics:            metric,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
		CreateTime:         r.now,
		ModifyTime:         r.now,
	}
	if r.canary != nil {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		r.canary.PlacedCanaries = append(r.canary.PlacedCanaries, a.ID)
	}
	if prev != nil {
		a.PreviousAllocation = prev.ID
		if delay, ok := r.rescheduling[prev.ID]; ok {
			r.rescheduledFrom(a, prev, delay)
		}
	}
	return a
}

// preemptOrFail ends a placement of tg that fits on no node: when the
// scheduler configuration lets the job's type preempt, allocations of
// jobs at least PreemptionPriorityDelta lower in priority are evicted from
// the exhausted node where that disrupts least (preempt.go); otherwise the
// plan records the failure, explained by metric.
func (r *run) preemptOrFail(tg *structs.TaskGroup, ask allocResources, exhausted []*structs.Node, metric *structs.AllocMetric,
	name string, prev *structs.Allocation, deploymentID string) (bool, error) {
	if len(exhausted) == 0 || !r.config.PreemptionEnabled(r.job.Type) || requestsDevices(tg) {
		r.plan.failed(tg.Name, metric)
		return false, nil
	}
	sort.Slice(exhausted, func(i, j int) bool { return exhausted[i].ID < exhausted[j].ID })
	best, preempt, score, err := r.choosePreemption(exhausted, ask.total)
	if err != nil {
		return false, err
	}
	var ports *portAssignment
	if best != nil {
		if ports, err = r.portsAfterPreemption(best, tg, preempt, metric); err != nil { // ports.go
			return false, err
		}
		if ports == nil && requestsPorts(tg) {
			best = nil
		}
	}
	if best == nil {
		r.plan.failed(tg.Name, metric)
		return false, nil
	}
	metric.ScoreMetaData = []*structs.NodeScoreMeta{{NodeID: best.ID, Scores: map[string]float64{structs.ScorerBinPack: score}, NormScore: score}}
	a := r.newAllocation(tg, name, best, nil, ports, metric, deploymentID, prev)
	for _, p := range preempt {
		a.PreemptedAllocations = append(a.PreemptedAllocations, p.ID)
		r.plan.AppendPreemption(p, a.ID, r.now)
		r.plan.desired(tg.Name).Preemptions++
	}
	r.plan.AppendAlloc(a)
	r.placedOn(a)
	return true, nil
}

// sharesHost reports whether allocs hold one that distinct_hosts keeps off
// the same node as a new allocation of tg.
func sharesHost(allocs []*structs.Allocation, job *structs.Job, tg *structs.TaskGroup, scope string) bool {
	for _, a := range allocs {
		if a.Namespace != job.Namespace || a.JobID != job.ID {
			continue
		}
		if scope == "job" || a.TaskGroup == tg.Name {
			return true
		}
	}
	return false
}

// allocResources is what a new allocation of a group asks for.
type allocResources struct {
	total     *structs.Resources
	tasks     map[string]*structs.Resources
	allocated *structs.AllocatedResources
}

func newAllocResources(job *structs.Job, tg *structs.TaskGroup) allocResources {
	out := allocResources{
		total:     &structs.Resources{},
		tasks:     map[string]*structs.Resources{},
		allocated: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{}},
	}
	for _, t := range tg.Tasks {
		res := t.Resources
		if res == nil {
			res = structs.DefaultResources()
		}
		out.total.CPU += res.CPU
		out.total.Cores += res.Cores
		out.total.MemoryMB += res.MemoryMB
		out.total.MemoryMaxMB += res.MemoryMaxMB
		out.tasks[t.Name] = res.Copy()
		out.allocated.Tasks[t.Name] = &structs.AllocatedTaskResources{
			Cpu:    structs.AllocatedCpuResources{CpuShares: int64(res.CPU)},
			Memory: structs.AllocatedMemoryResources{MemoryMB: int64(res.MemoryMB), MemoryMaxMB: int64(res.MemoryMaxMB)},
		}
	}
	if tg.EphemeralDisk != nil {
		out.total.DiskMB = tg.EphemeralDisk.SizeMB
		out.allocated.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	return out
}
