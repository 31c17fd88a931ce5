package scheduler

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/drover-io/drover/structs"
)

// Descriptions set on stopped allocations.
const (
	descJobStopped = "alloc not needed since job was stopped"
	descNotNeeded  = "alloc not needed due to job update"
	descUpdating   = "alloc is being updated due to job update"
	descLost       = "alloc is lost since its node is down"
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
	nodes = append([]*structs.Node(nil), nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })

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
	if job == nil || job.Stop {
		r.stopAll()
		if err := r.cancelDeployment(eval.Namespace, eval.JobID); err != nil {
			return nil, err
		}
		return r.plan, nil
	}
	if jobType == structs.JobTypeSystem {
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
	// err is the first state read error met where returning one is awkward.
	err error
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

// updateInPlace adds to the plan a copy of a that runs the current job
// version on the same node.
func (r *run) updateInPlace(a *structs.Allocation) {
	c := a.Copy()
	c.Job = r.job
	c.EvalID = r.eval.ID
	c.ModifyTime = r.now
	r.plan.AppendAlloc(c)
}

// candidates returns the ready nodes in the job's datacenters and fills the
// pool counts of metric.
func (r *run) candidates(metric *structs.AllocMetric) []*structs.Node {
	var out []*structs.Node
	for _, n := range r.nodes {
		if !inDatacenters(n.Datacenter, r.job.Datacenters) {
			continue
		}
		out = append(out, n)
		if metric.NodesAvailable == nil {
			metric.NodesAvailable = map[string]int{}
		}
		metric.NodesAvailable[n.Datacenter]++
	}
	metric.NodesInPool = len(out)
	return out
}

// place tries to place one allocation of tg named name on the best of
// nodes, recording a failure in the plan when none fits. With coalesce, a
// group that already failed fails again without trying: nothing changed.
//
// When no node fits and the scheduler configuration lets the job's type
// preempt, allocations of jobs at least PreemptionPriorityDelta lower in
// priority are evicted from the feasible node where that disrupts least
// (see preempt.go). deploymentID tags a replacement made by a rolling
// update. It reports whether the allocation was placed.
func (r *run) place(tg *structs.TaskGroup, name string, prev *structs.Allocation, deploymentID string, nodes []*structs.Node, metric *structs.AllocMetric, coalesce bool) (bool, error) {
	if err := r.interrupted(); err != nil {
		return false, err
	}
	if f, ok := r.plan.FailedTGAllocs[tg.Name]; ok && coalesce {
		r.plan.failed(tg.Name, f)
		return false, nil
	}
	ask := newAllocResources(r.job, tg)
	scope := distinctHostsScope(r.job, tg)
	props, err := r.distinctProperties(tg)
	if err != nil {
		return false, err
	}
	var best *structs.Node
	var bestScore float64
	var exhausted []*structs.Node // feasible, but full
	var bestDevices map[string][]*structs.AllocatedDeviceResource
	penalized := r.penalizedNodes(prev)
	for _, node := range nodes {
		metric.NodesEvaluated++
		if !r.feasible(node, tg, metric) {
			continue
		}
		allocs, err := r.proposed(node.ID)
		if err != nil {
			return false, fmt.Errorf("read allocs of node %q: %w", node.ID, err)
		}
		if scope != "" && sharesHost(allocs, r.job, tg, scope) {
			metric.NodesFiltered++
			if metric.ConstraintFiltered == nil {
				metric.ConstraintFiltered = map[string]int{}
			}
			metric.ConstraintFiltered[filterDistinctHosts]++
			continue
		}
		if reason := propertyBlocks(props, node); reason != "" {
			filterNode(metric, node, reason)
			continue
		}
		fit, dim, score := AllocsFit(node, append(allocs, &structs.Allocation{Resources: ask.total}))
		if !fit {
			exhausted = append(exhausted, node)
			metric.NodesExhausted++
			if metric.DimensionExhausted == nil {
				metric.DimensionExhausted = map[string]int{}
			}
			metric.DimensionExhausted[dim]++
			if node.NodeClass != "" {
				if metric.ClassExhausted == nil {
					metric.ClassExhausted = map[string]int{}
				}
				metric.ClassExhausted[node.NodeClass]++
			}
			continue
		}
		devices, devScore, devFail := assignDevices(node, allocs, tg, nil)
		if devFail.failed() {
			devFail.record(metric)
			continue
		}
		score += devScore
		if penalized[node.ID] {
			score -= nodeReschedulePenalty
		}
		if best == nil || score > bestScore {
			best, bestScore, bestDevices = node, score, devices
		}
	}
	var preempt []*structs.Allocation
	if best == nil && len(exhausted) > 0 && r.config.PreemptionEnabled(r.job.Type) && !requestsDevices(tg) {
		var err error
		best, preempt, bestScore, err = r.choosePreemption(exhausted, ask.total)
		if err != nil {
			return false, err
		}
	}
	if best == nil {
		r.plan.failed(tg.Name, metric)
		return false, nil
	}
	metric.Scores = map[string]float64{best.ID + ".binpack": bestScore}
	a := &structs.Allocation{
		ID:                 r.newID(),
		DeploymentID:       deploymentID,
		Namespace:          r.job.Namespace,
		EvalID:             r.eval.ID,
		Name:               name,
		NodeID:             best.ID,
		NodeName:           best.Name,
		JobID:              r.job.ID,
		Job:                r.job,
		TaskGroup:          tg.Name,
		Resources:          ask.total,
		TaskResources:      ask.tasks,
		AllocatedResources: withDevices(ask.allocated, bestDevices),
		Metrics:            metric,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
		CreateTime:         r.now,
		ModifyTime:         r.now,
	}
	if prev != nil {
		a.PreviousAllocation = prev.ID
		if delay, ok := r.rescheduling[prev.ID]; ok {
			r.rescheduledFrom(a, prev, delay)
		}
	}
	for _, p := range preempt {
		a.PreemptedAllocations = append(a.PreemptedAllocations, p.ID)
		r.plan.AppendPreemption(p, a.ID, r.now)
		r.plan.desired(tg.Name).Preemptions++
	}
	r.plan.AppendAlloc(a)
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
