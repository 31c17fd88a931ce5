package scheduler

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// fakeState is an in-memory State for tests.
type fakeState struct {
	jobs        map[structs.NamespacedID]*structs.Job
	nodes       []*structs.Node
	allocs      []*structs.Allocation
	config      *structs.SchedulerConfiguration
	deployments []*structs.Deployment
}

func (f *fakeState) SchedulerConfig() (*structs.SchedulerConfiguration, error) { return f.config, nil }

func (f *fakeState) LatestDeployment(ns, jobID string) (*structs.Deployment, error) {
	var out *structs.Deployment
	for _, d := range f.deployments {
		if d.Namespace == ns && d.JobID == jobID && (out == nil || d.CreateIndex > out.CreateIndex) {
			out = d
		}
	}
	return out, nil
}

func newFakeState() *fakeState {
	return &fakeState{jobs: map[structs.NamespacedID]*structs.Job{}}
}

func (f *fakeState) JobByID(ns, id string) (*structs.Job, error) {
	return f.jobs[structs.NamespacedID{Namespace: ns, ID: id}], nil
}

func (f *fakeState) AllocsByJob(ns, id string) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, a := range f.allocs {
		if a.Namespace == ns && a.JobID == id {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeState) AllocsByNode(id string) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, a := range f.allocs {
		if a.NodeID == id {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeState) NodeByID(id string) (*structs.Node, error) {
	for _, n := range f.nodes {
		if n.ID == id {
			return n, nil
		}
	}
	return nil, nil
}

func (f *fakeState) ReadyNodes() ([]*structs.Node, error) {
	var out []*structs.Node
	for _, n := range f.nodes {
		if n.Ready() {
			out = append(out, n)
		}
	}
	return out, nil
}

// testOptions returns Options with a fixed clock and sequential IDs.
func testOptions() Options {
	n, d, e := 0, 0, 0
	return Options{
		NewEvalID:       func() string { e++; return fmt.Sprintf("eval-f%d", e) },
		Now:             func() time.Time { return time.Unix(1700000000, 0) },
		NewID:           func() string { n++; return fmt.Sprintf("alloc-%d", n) },
		NewDeploymentID: func() string { d++; return fmt.Sprintf("dep-%d", d) },
	}
}

// newNode returns a ready node with the mock driver, 1000 MHz and 1024 MB.
func newNode(id string) *structs.Node {
	return &structs.Node{
		ID: id, Name: id, Datacenter: "dc1", Status: structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Attributes:            map[string]string{"kernel.name": "linux"},
		Meta:                  map[string]string{},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 1000},
			Memory: structs.NodeMemoryResources{MemoryMB: 1024},
		},
		Drivers: map[string]*structs.DriverInfo{"mock": {Detected: true, Healthy: true}},
	}
}

// newJob returns a canonical job with one group "web" of count tasks "app"
// asking for cpu MHz and mem MB, at JobModifyIndex 10.
func newJob(id, typ string, count, cpu, mem int) *structs.Job {
	j := &structs.Job{ID: id, Type: typ, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: count,
		Tasks: []*structs.Task{{Name: "app", Driver: "mock", Resources: &structs.Resources{CPU: cpu, MemoryMB: mem}}},
	}}}
	j.Canonicalize()
	j.JobModifyIndex = 10
	j.Version = 1
	return j
}

// newAlloc returns an allocation of job's group tg at index idx on node.
func newAlloc(id string, job *structs.Job, tg string, idx int, node, client string) *structs.Allocation {
	total := &structs.Resources{CPU: 100, MemoryMB: 256}
	if g := job.LookupTaskGroup(tg); g != nil {
		total = newAllocResources(job, g).total
	}
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, JobID: job.ID, Job: job, TaskGroup: tg,
		Name: structs.AllocName(job.ID, tg, idx), NodeID: node, NodeName: node,
		Resources: total, DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: client,
		CreateIndex: uint64(idx + 1),
	}
}

func evalFor(job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{ID: "eval-1", Namespace: job.Namespace, JobID: job.ID, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, Status: structs.EvalStatusPending}
}

// renderPlan writes a plan as sorted lines of text.
func renderPlan(p *Plan) string {
	var b strings.Builder
	for _, a := range p.Stops() {
		fmt.Fprintf(&b, "stop %s %s node=%s: %s\n", a.ID, a.Name, a.NodeID, a.DesiredDescription)
	}
	for _, a := range p.Preemptions() {
		fmt.Fprintf(&b, "evict %s %s node=%s by=%s: %s\n", a.ID, a.Name, a.NodeID, a.PreemptedByAllocation, a.DesiredDescription)
	}
	for _, a := range p.Placements() {
		if a.CreateIndex != 0 {
			fmt.Fprintf(&b, "update %s %s node=%s", a.ID, a.Name, a.NodeID)
			if a.DeploymentID != "" {
				fmt.Fprintf(&b, " deployment=%s", a.DeploymentID)
				if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
					fmt.Fprintf(&b, " healthy=%t", *a.DeploymentStatus.Healthy)
				}
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "place %s node=%s id=%s cpu=%d mem=%d", a.Name, a.NodeID, a.ID, a.Resources.CPU, a.Resources.MemoryMB)
		if a.PreviousAllocation != "" {
			fmt.Fprintf(&b, " prev=%s", a.PreviousAllocation)
		}
		if a.DeploymentID != "" {
			fmt.Fprintf(&b, " deployment=%s", a.DeploymentID)
		}
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			b.WriteString(" canary")
		}
		if len(a.PreemptedAllocations) > 0 {
			fmt.Fprintf(&b, " preempted=%s", strings.Join(a.PreemptedAllocations, ","))
		}
		b.WriteString(renderTracker(a.RescheduleTracker))
		if m := a.Metrics; m != nil && len(m.ScoreMetaData) > 0 && m.ScoreMetaData[0].NodeID == a.NodeID {
			sm := m.ScoreMetaData[0]
			fmt.Fprintf(&b, " score=%.3f", sm.NormScore)
			for _, k := range []string{structs.ScorerSpread, structs.ScorerNodeAffinity} {
				if v, ok := sm.Scores[k]; ok {
					fmt.Fprintf(&b, " %s=%.3f", k, v)
				}
			}
		}
		b.WriteString("\n")
	}
	renderReschedule(&b, p)
	groups := make([]string, 0, len(p.FailedTGAllocs))
	for g := range p.FailedTGAllocs {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		m := p.FailedTGAllocs[g]
		fmt.Fprintf(&b, "failed %s queued=%d coalesced=%d evaluated=%d filtered=%d exhausted=%d%s%s\n",
			g, p.QueuedAllocations[g], m.CoalescedFailures, m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted,
			renderCounts(" constraint", m.ConstraintFiltered), renderCounts(" dimension", m.DimensionExhausted))
	}
	for _, d := range p.Deployments {
		fmt.Fprintf(&b, "deployment %s %s: %s", d.ID, d.Status, d.StatusDescription)
		for _, g := range sortedGroups(d.TaskGroups) {
			s := d.TaskGroups[g]
			fmt.Fprintf(&b, " [%s desired=%d placed=%d healthy=%d unhealthy=%d", g, s.DesiredTotal, s.PlacedAllocs, s.HealthyAllocs, s.UnhealthyAllocs)
			if s.DesiredCanaries > 0 {
				fmt.Fprintf(&b, " canaries=%d/%d%s promoted=%t", len(s.PlacedCanaries), s.DesiredCanaries,
					renderIDs(s.PlacedCanaries), s.Promoted)
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "no-op\n"
	}
	return b.String()
}

// renderIDs writes a list of IDs as "(a,b)", "" when empty.
func renderIDs(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return "(" + strings.Join(ids, ",") + ")"
}

// renderAnnotations writes the plan's per-group counts, one line a group.
func renderAnnotations(p *Plan) string {
	var b strings.Builder
	for _, g := range sortedGroups(p.Annotations.DesiredTGUpdates) {
		u := p.Annotations.DesiredTGUpdates[g]
		fmt.Fprintf(&b, "desired %s: ignore=%d place=%d stop=%d inplace=%d destructive=%d preemptions=%d",
			g, u.Ignore, u.Place, u.Stop, u.InPlaceUpdate, u.DestructiveUpdate, u.Preemptions)
		if u.Canary > 0 {
			fmt.Fprintf(&b, " canary=%d", u.Canary)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func sortedGroups[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func renderCounts(label string, m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q:%d", k, m[k])
	}
	return label + "{" + strings.Join(parts, " ") + "}"
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprintf("bad number %q", s))
	}
	return n
}

// renderTally counts the plan's placements by the value attr takes on
// their nodes: "tally ${meta.rack}: r1=2 r2=2".
func renderTally(st *fakeState, p *Plan, attr string) string {
	counts := map[string]int{}
	for _, a := range p.Placements() {
		n, _ := st.NodeByID(a.NodeID)
		v, ok := resolveTarget(attr, n)
		if !ok {
			v = "(unset)"
		}
		counts[v]++
	}
	var parts []string
	for _, v := range sortedGroups(counts) {
		parts = append(parts, fmt.Sprintf("%s=%d", v, counts[v]))
	}
	return fmt.Sprintf("tally %s: %s\n", attr, strings.Join(parts, " "))
}
