package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/structs"
)

// heldCommits is a planCommitter whose entries commit (through the
// server's raft) or fail only when the test says so, in the order
// proposed: it holds an entry "in flight" for as long as a test needs.
type heldCommits struct {
	s        *Server
	proposed chan *PlanResultCommand // each entry as it is proposed
	release  chan error              // the oldest entry's fate: nil commits it
	stopped  chan struct{}           // closed when the test ends: what is held fails
}

func newHeldCommits(s *Server) *heldCommits {
	return &heldCommits{s: s, proposed: make(chan *PlanResultCommand, 16), release: make(chan error),
		stopped: make(chan struct{})}
}

func (h *heldCommits) commit(cmd *PlanResultCommand) (func() (uint64, error), error) {
	h.proposed <- cmd
	return func() (uint64, error) {
		select {
		case err := <-h.release:
			if err != nil {
				return 0, err
			}
		case <-h.stopped:
			return 0, errors.New("test ended")
		}
		index, _, err := h.s.raftApply(ApplyPlanResultsRequestType, cmd)
		return index, err
	}, nil
}

// startApplier runs a plan applier over queue with h's commits, stopped
// and waited for at the test's end.
func startApplier(t *testing.T, s *Server, h *heldCommits) chan<- *pendingPlan {
	t.Helper()
	queue := make(chan *pendingPlan)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		(&planApplier{s: s, queue: queue, commit: h.commit}).run(ctx)
	}()
	t.Cleanup(func() { cancel(); close(h.stopped); wg.Wait() })
	return queue
}

// submitTo hands a plan to the applier and returns once the applier took
// it (and so checked it, or holds it for the next batch); the result comes
// on the returned channel.
func submitTo(queue chan<- *pendingPlan, p *pendingPlan) <-chan planResult {
	p.respCh = make(chan planResult, 1)
	queue <- p
	return p.respCh
}

// placing is a plan of eval evalID placing allocs, with its evaluation
// completed.
func placing(evalID string, allocs ...*structs.Allocation) *pendingPlan {
	plan := &scheduler.Plan{EvalID: evalID, NodeAllocation: map[string][]*structs.Allocation{},
		NodeUpdate: map[string][]*structs.Allocation{}}
	for _, a := range allocs {
		a.EvalID = evalID
		plan.AppendAlloc(a)
	}
	eval := &structs.Evaluation{ID: evalID, Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete}
	return &pendingPlan{plan: plan, evals: []*structs.Evaluation{eval}}
}

func allocIDs(cmd *PlanResultCommand) []string {
	var out []string
	for _, a := range cmd.Allocs {
		out = append(out, a.ID)
	}
	return out
}

func nodeCPU(t *testing.T, s *Server, node string) int {
	t.Helper()
	allocs, err := s.State().AllocsByNode(nil, node)
	if err != nil {
		t.Fatal(err)
	}
	cpu := 0
	for _, a := range allocs {
		if !a.TerminalStatus() {
			cpu += a.Resources.CPU
		}
	}
	return cpu
}

// TestPlanBatchChecksAgainstEntryInFlight: the plans that come while an
// entry commits are checked against the state plus that entry, and
// committed together, in the order they came, in the next entry; one that
// would overcommit the node with the entry in flight is rejected.
func TestPlanBatchChecksAgainstEntryInFlight(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 4096))
	job := testJob("web", 1, 100, 10)
	job.Canonicalize()
	h := newHeldCommits(s)
	queue := startApplier(t, s, h)

	r1 := submitTo(queue, placing("e1", planAlloc("a1", "n1", job, 400)))
	if got := allocIDs(<-h.proposed); fmt.Sprint(got) != "[a1]" {
		t.Fatalf("first entry = %v, want [a1]", got)
	}
	// e1's entry is in flight: these are checked against it.
	r2 := submitTo(queue, placing("e2", planAlloc("a2", "n1", job, 400)))
	r3 := submitTo(queue, placing("e3", planAlloc("a3", "n1", job, 400))) // 1,200 with a1 and a2
	r4 := submitTo(queue, placing("e4", planAlloc("a4", "n1", job, 100))) // 900
	h.release <- nil
	res1 := <-r1
	if res1.Err != nil || res1.Rejected || res1.Index == 0 {
		t.Fatalf("e1: %+v", res1)
	}
	if got := allocIDs(<-h.proposed); fmt.Sprint(got) != "[a2 a4]" {
		t.Fatalf("second entry = %v, want [a2 a4] (e3 does not fit with a1 and a2)", got)
	}
	h.release <- nil
	res2, res3, res4 := <-r2, <-r3, <-r4
	if res2.Err != nil || res2.Rejected || res2.Index <= res1.Index || res4.Index != res2.Index {
		t.Fatalf("e2: %+v, e4: %+v: want both committed in one entry after e1's (%d)", res2, res4, res1.Index)
	}
	if res3.Err != nil || !res3.Rejected || res3.Placed != 0 || res3.Index != 0 || res3.RefreshIndex < res2.Index {
		t.Fatalf("e3: %+v: want rejected, nothing committed, refresh at least %d", res3, res2.Index)
	}
	if cpu := nodeCPU(t, s, "n1"); cpu != 900 {
		t.Fatalf("n1 holds %d MHz, want 900 (a1, a2, a4)", cpu)
	}
	stored, _ := s.State().EvalByID(nil, "e4")
	if stored == nil || stored.Status != structs.EvalStatusComplete {
		t.Fatalf("e4's evaluation not committed with its plan: %+v", stored)
	}
}

// TestPlanBatchAfterFailedEntry: when the entry in flight fails, only its
// plans fail, and the batch checked against it is checked again on the
// state without it: the room its stop would have freed is not counted.
func TestPlanBatchAfterFailedEntry(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 4096))
	job := testJob("web", 1, 100, 10)
	job.Canonicalize()
	busy := planAlloc("busy", "n1", job, 900)
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
		t.Fatal(err)
	}
	h := newHeldCommits(s)
	queue := startApplier(t, s, h)

	// e1 stops busy and places a1 in its room.
	p1 := placing("e1", planAlloc("a1", "n1", job, 500))
	p1.plan.AppendStop(busy, "test", 1)
	r1 := submitTo(queue, p1)
	<-h.proposed
	// a2 fits only if e1's stop is committed.
	r2 := submitTo(queue, placing("e2", planAlloc("a2", "n1", job, 400)))
	h.release <- errors.New("leadership lost")
	if res := <-r1; res.Err == nil || res.Index != 0 {
		t.Fatalf("e1: %+v: want its commit's error", res)
	}
	// Rejected whole, e2 writes nothing: no entry.
	var res2 planResult
	select {
	case res2 = <-r2:
	case cmd := <-h.proposed:
		t.Fatalf("e2 checked against e1's failed entry was proposed: %v (n1 would hold 1,300 MHz)", allocIDs(cmd))
	}
	if res2.Err != nil || !res2.Rejected || res2.Placed != 0 || res2.Index != 0 {
		t.Fatalf("e2: %+v: want rejected on the state without e1 (busy still runs)", res2)
	}
	if cpu := nodeCPU(t, s, "n1"); cpu != 900 {
		t.Fatalf("n1 holds %d MHz, want 900 (busy alone)", cpu)
	}
}

// TestPlanBatchSplitsCollidingPlans: a plan that writes an allocation the
// batch already writes (here it stops one placed by an earlier plan of the
// batch) waits for the next entry, checked against the batch before it.
func TestPlanBatchSplitsCollidingPlans(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 4096))
	job := testJob("web", 1, 100, 10)
	job.Canonicalize()
	h := newHeldCommits(s)
	queue := startApplier(t, s, h)

	r1 := submitTo(queue, placing("e1", planAlloc("a1", "n1", job, 100)))
	<-h.proposed
	a2 := planAlloc("a2", "n1", job, 800)
	r2 := submitTo(queue, placing("e2", a2))
	p3 := placing("e3", planAlloc("a3", "n1", job, 800)) // fits once a2 is stopped
	p3.plan.AppendStop(a2, "test", 1)
	r3 := submitTo(queue, p3)
	h.release <- nil
	if got := allocIDs(<-h.proposed); fmt.Sprint(got) != "[a2]" {
		t.Fatalf("second entry = %v, want [a2] alone", got)
	}
	h.release <- nil
	if got := allocIDs(<-h.proposed); fmt.Sprint(got) != "[a2 a3]" {
		t.Fatalf("third entry = %v, want [a2 a3] (a2 stopped, a3 placed)", got)
	}
	h.release <- nil
	res1, res2, res3 := <-r1, <-r2, <-r3
	if !(res1.Index < res2.Index && res2.Index < res3.Index) || res3.Rejected {
		t.Fatalf("results %+v %+v %+v: want three entries in order, e3 accepted", res1, res2, res3)
	}
	if cpu := nodeCPU(t, s, "n1"); cpu != 900 {
		t.Fatalf("n1 holds %d MHz, want 900 (a1, a3)", cpu)
	}
}

// TestConcurrentPlansNeverOvercommit submits many plans at once to the
// server's own applier (raft commits, batches as they come): the nodes
// end exactly full, never over.
func TestConcurrentPlansNeverOvercommit(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 4096))
	registerNode(t, s, testNode("n2", 1000, 4096))
	job := testJob("web", 1, 100, 10)
	job.Canonicalize()
	var wg sync.WaitGroup
	results := make([]planResult, 60)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := []string{"n1", "n2"}[i%2]
			p := placing(fmt.Sprintf("e%d", i), planAlloc(fmt.Sprintf("a%d", i), node, job, 100))
			results[i] = s.submitPlan(context.Background(), p)
		}()
	}
	wg.Wait()
	placed := 0
	for i, r := range results {
		if r.Err != nil {
			t.Fatalf("plan %d: %v", i, r.Err)
		}
		placed += r.Placed
	}
	for _, n := range []string{"n1", "n2"} {
		if cpu := nodeCPU(t, s, n); cpu != 1000 {
			t.Errorf("%s holds %d MHz, want 1000", n, cpu)
		}
	}
	if placed != 20 {
		t.Fatalf("placed %d, want 20", placed)
	}
}

// TestPlanResultCarriesEachJobOnce: the entry proposed carries each job
// once, not once per allocation, and the FSM gives every allocation its
// own job version back (an allocation sent with no job keeps the stored
// one); an entry whose job references do not match its allocations is
// refused with an error.
func TestPlanResultCarriesEachJobOnce(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 4000, 4096))
	v1 := testJob("web", 1, 100, 10)
	v1.Canonicalize()
	v1.Version = 1
	v0 := v1.Copy()
	v0.Version = 0
	kept := planAlloc("kept", "n1", v0, 100)
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{kept}}); err != nil {
		t.Fatal(err)
	}
	update := *kept
	update.Job = nil
	update.DesiredDescription = "updated"
	cmd := &PlanResultCommand{Allocs: []*structs.Allocation{
		planAlloc("a1", "n1", v1, 100), planAlloc("a2", "n1", v1, 100), planAlloc("old", "n1", v0, 100), &update,
	}}
	n := normalizePlanResult(cmd)
	if len(n.Jobs) != 2 || fmt.Sprint(n.AllocJobs) != "[1 1 2 0]" {
		t.Fatalf("jobs %d, alloc jobs %v: want 2 and [1 1 2 0]", len(n.Jobs), n.AllocJobs)
	}
	for i, a := range cmd.Allocs[:3] {
		if a.Job == nil || n.Allocs[i].Job != nil {
			t.Fatalf("alloc %s: the command's copy must lose its job, the plan's keep it", a.ID)
		}
	}
	plain, err := encodeCommand(s.fsm.handle, ApplyPlanResultsRequestType, cmd)
	if err != nil {
		t.Fatal(err)
	}
	small, err := encodeCommand(s.fsm.handle, ApplyPlanResultsRequestType, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) >= len(plain) {
		t.Fatalf("normalized entry is %d bytes, plain %d", len(small), len(plain))
	}
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, n); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"a1": 1, "a2": 1, "old": 0, "kept": 0}
	for id, version := range want {
		a, err := s.State().AllocByID(nil, id)
		if err != nil || a == nil || a.Job == nil || a.Job.Version != version {
			t.Fatalf("alloc %s: %+v, %v: want job version %d", id, a, err, version)
		}
	}
	if a, _ := s.State().AllocByID(nil, "kept"); a.DesiredDescription != "updated" {
		t.Fatalf("kept not updated: %q", a.DesiredDescription)
	}

	bad := normalizePlanResult(&PlanResultCommand{Allocs: []*structs.Allocation{planAlloc("a3", "n1", v1, 100)}})
	bad.AllocJobs = nil
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, bad); err == nil || !strings.Contains(err.Error(), "names the jobs") {
		t.Fatalf("mismatched job references: err = %v", err)
	}
	if a, _ := s.State().AllocByID(nil, "a3"); a != nil {
		t.Fatal("a3 stored without its job")
	}
}

// BenchmarkPlanResultDecode is a follower's decode of one plan result of
// 100 allocations of one job, sent plain (the job in every allocation)
// and normalized (the job once).
func BenchmarkPlanResultDecode(b *testing.B) {
	job := testJob("web", 100, 100, 10)
	job.Canonicalize()
	cmd := &PlanResultCommand{}
	for i := range 100 {
		cmd.Allocs = append(cmd.Allocs, planAlloc(fmt.Sprintf("a%d", i), "n1", job, 100))
	}
	f, err := newFSM(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  *PlanResultCommand
	}{{"plain", cmd}, {"normalized", normalizePlanResult(cmd)}} {
		buf, err := encodeCommand(f.handle, ApplyPlanResultsRequestType, tc.cmd)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var out PlanResultCommand
				if err := decodeBody(f.handle, buf[1:], &out); err != nil {
					b.Fatal(err)
				}
				if err := denormalizePlanResult(&out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf)), "bytes/entry")
		})
	}
}
