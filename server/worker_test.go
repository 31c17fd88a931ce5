package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/scheduler"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// armedClock is a fakeClock that reports every timer armed on it, so that
// a test advances time only once the timer it means to fire exists.
type armedClock struct {
	*fakeClock
	armed chan time.Duration
}

func newArmedClock() *armedClock {
	return &armedClock{fakeClock: &fakeClock{now: time.Unix(1700000000, 0)}, armed: make(chan time.Duration, 64)}
}

func (c *armedClock) AfterFunc(d time.Duration, f func()) Timer {
	t := c.fakeClock.AfterFunc(d, f)
	select {
	case c.armed <- d:
	default:
	}
	return t
}

// waitArmed waits until a timer of duration d is armed.
func (c *armedClock) waitArmed(t *testing.T, d time.Duration) {
	t.Helper()
	for got := range c.armed {
		if got == d {
			return
		}
	}
}

// hugeLimit lets a test store a job no real server would accept, as one
// committed before the count limit existed.
const hugeLimit = int(^uint(0) >> 1)

const testEvalTimeout = 7 * time.Minute

// TestEvalDeadlineFailsEvalAndFreesWorker: issue 19's Count = int64 max
// job. Its evaluation computes until the deadline, then fails with the
// reason; meanwhile a second worker schedules another job, and the huge
// job's stop waits only for the deadline.
func TestEvalDeadlineFailsEvalAndFreesWorker(t *testing.T) {
	clock := newArmedClock()
	s := newTestServer(t, func(c *Config) {
		c.Clock, c.NumWorkers, c.JobMaxCount, c.EvalTimeout = clock, 2, hugeLimit, testEvalTimeout
	})
	registerNode(t, s, testNode("n1", 4000, 4096))
	huge := registerJob(t, s, testJob("huge", hugeLimit, 100, 100))
	clock.waitArmed(t, testEvalTimeout) // a worker is on it

	small := registerJob(t, s, testJob("small", 1, 100, 100))
	waitEvalStatus(t, s, small.EvalID, structs.EvalStatusComplete)
	if n := len(allocsOf(t, s, "small", structs.AllocDesiredStatusRun)); n != 1 {
		t.Fatalf("small job has %d allocs while the huge one computes, want 1", n)
	}
	if e, _ := s.State().EvalByID(nil, huge.EvalID); e.Status != structs.EvalStatusPending {
		t.Fatalf("huge eval = %s before its deadline", e.Status)
	}
	stop, err := s.JobDeregister(context.Background(), &structs.JobDeregisterRequest{JobID: "huge"})
	if err != nil {
		t.Fatal(err)
	}

	clock.Advance(testEvalTimeout)
	e := waitEvalStatus(t, s, huge.EvalID, structs.EvalStatusFailed)
	for _, want := range []string{"longer than 7m0s", "eval_nack_timeout"} {
		if !strings.Contains(e.StatusDescription, want) {
			t.Errorf("description %q does not say %q", e.StatusDescription, want)
		}
	}
	waitEvalStatus(t, s, stop.EvalID, structs.EvalStatusComplete)
	if n := len(allocsOf(t, s, "huge", "")); n != 0 {
		t.Fatalf("the interrupted pass committed %d allocs", n)
	}
}

// TestShutdownMidEvaluation: Shutdown returns while a worker computes an
// evaluation that would never end, and leaves it pending for the next
// leader instead of failing it.
func TestShutdownMidEvaluation(t *testing.T) {
	clock := newArmedClock()
	s, err := NewServer(context.Background(), &Config{NodeName: "shutdown-mid-eval", Clock: clock, NumWorkers: 1,
		JobMaxCount: hugeLimit, EvalTimeout: testEvalTimeout})
	if err != nil {
		t.Fatal(err)
	}
	registerNode(t, s, testNode("n1", 4000, 4096))
	r := registerJob(t, s, testJob("huge", hugeLimit, 100, 100))
	clock.waitArmed(t, testEvalTimeout)
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.State().EvalByID(nil, r.EvalID); e.Status != structs.EvalStatusPending {
		t.Fatalf("eval = %s after shutdown, want pending", e.Status)
	}
}

// TestJobPlanStops: a plan that would never finish computing (issue 19's
// count) stops when its caller goes away, or at the evaluation deadline.
func TestJobPlanStops(t *testing.T) {
	tests := []struct {
		name     string
		stop     func(clock *armedClock, cancel context.CancelFunc)
		wantKind structs.ErrorKind
		wantText string
	}{
		// The caller is gone: the kind does not matter, the transport maps
		// a cancelled call to 503.
		{"caller goes away", func(_ *armedClock, cancel context.CancelFunc) { cancel() }, structs.KindInternal, "canceled"},
		{"deadline", func(clock *armedClock, _ context.CancelFunc) { clock.Advance(testEvalTimeout) }, structs.KindUnavailable, "eval_nack_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newArmedClock()
			s := newTestServer(t, func(c *Config) { c.Clock, c.JobMaxCount, c.EvalTimeout = clock, hugeLimit, testEvalTimeout })
			registerNode(t, s, testNode("n1", 4000, 4096))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.JobPlan(ctx, &structs.JobPlanRequest{Job: testJob("huge", hugeLimit, 100, 100)})
				done <- err
			}()
			clock.waitArmed(t, testEvalTimeout) // the pass is starting
			tt.stop(clock, cancel)
			err := <-done
			if !strings.Contains(fmt.Sprint(err), tt.wantText) {
				t.Fatalf("JobPlan = %v, want %q", err, tt.wantText)
			}
			if structs.KindOf(err) != tt.wantKind {
				t.Fatalf("kind = %s, want %s", structs.KindOf(err), tt.wantKind)
			}
		})
	}
}

// TestWorkerRetriesOnFreshSnapshot: a plan computed on a snapshot that
// another plan overtook is partly rejected by the plan applier; the
// worker schedules again on a fresh snapshot and places where there is
// room now.
func TestWorkerRetriesOnFreshSnapshot(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 1000))
	r := registerJob(t, s, testJob("web", 1, 600, 100))
	stale := s.snapshot()

	// Another worker's plan fills n1, and a second node joins.
	other := testJob("other", 1, 600, 100)
	other.Canonicalize()
	busy := planAlloc("busy", "n1", other, 600)
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
		t.Fatal(err)
	}
	registerNode(t, s, testNode("n2", 1000, 1000))

	calls := 0
	snapshot := func(context.Context, uint64) (*state.StateSnapshot, error) {
		calls++
		if calls == 1 {
			return stale, nil
		}
		return s.snapshot(), nil
	}
	eval, _ := s.State().EvalByID(nil, r.EvalID)
	if err := s.processEval(context.Background(), eval, "", snapshot); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("scheduled %d times, want 2 (stale, then fresh)", calls)
	}
	placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
	if len(placed) != 1 || placed[0].NodeID != "n2" {
		t.Fatalf("placed = %v, want one alloc on n2", placed)
	}
	if e, _ := s.State().EvalByID(nil, r.EvalID); e.Status != structs.EvalStatusComplete {
		t.Fatalf("eval = %s", e.Status)
	}
}

// TestFollowerWorkerReplansOnLeaderState: a follower's worker schedules
// on its own state, which lags the leader's; the plan applier rejects its
// whole plan (the node it chose was filled by a plan its state does not
// hold yet) and commits nothing. The worker must schedule again on state
// at least as new as the one the applier checked the plan against, not
// on its own lagging state again. Before, a fully rejected plan came
// back with index 0: the worker scheduled again at once on the same
// lagging state, chose the same full node, and after five rejections the
// evaluation failed and waited 1 to 5 s for a follow-up (most of the time
// of bench/cluster with 3 servers).
func TestFollowerWorkerReplansOnLeaderState(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 1000, 1000))
	registerNode(t, s, testNode("n2", 1000, 1000))
	r := registerJob(t, s, testJob("web", 1, 600, 100))
	eval, _ := s.State().EvalByID(nil, r.EvalID)
	// The follower's store stops here: it holds the evaluation and both
	// nodes, empty.
	lagging := s.snapshot()
	lagIndex := lagging.LatestIndex()
	// The leader commits other plans the follower has not applied yet,
	// filling n1 and n2, and a third node joins.
	other := testJob("other", 1, 600, 100)
	other.Canonicalize()
	for i, n := range []string{"n1", "n2"} {
		busy := planAlloc(fmt.Sprintf("busy-%d", i), n, other, 600)
		if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
			t.Fatal(err)
		}
	}
	registerNode(t, s, testNode("n3", 1000, 1000))

	// The follower's store catches up only as far as a worker asks it to
	// wait for.
	var asked []uint64
	follower := func(_ context.Context, minIndex uint64) (*state.StateSnapshot, error) {
		asked = append(asked, minIndex)
		if minIndex > lagIndex {
			return s.snapshot(), nil
		}
		return lagging, nil
	}
	if err := s.processEval(context.Background(), eval, "", follower); err != nil {
		t.Fatalf("processEval = %v (snapshots asked at indexes %v, the lagging store at %d)", err, asked, lagIndex)
	}
	if len(asked) != 2 || asked[1] <= lagIndex {
		t.Fatalf("snapshots asked at indexes %v: want a second one newer than the lagging store's %d", asked, lagIndex)
	}
	placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
	if len(placed) != 1 || placed[0].NodeID != "n3" {
		t.Fatalf("placed = %v, want one alloc on n3", placed)
	}
	for _, n := range []string{"n1", "n2"} {
		allocs, _ := s.State().AllocsByNode(nil, n)
		if len(allocs) != 1 {
			t.Fatalf("node %s holds %d allocs, want 1 (no overcommit)", n, len(allocs))
		}
	}
}

// TestRejectedPlansThatPlaceKeepGoing: other workers keep taking most of
// the nodes each pass chose, but every pass places some allocations. The
// evaluation goes on until all are placed, more than maxPlanAttempts
// passes, instead of failing after maxPlanAttempts rejections and leaving
// the rest to a follow-up evaluation seconds later (bench/cluster with 3
// servers: 20 allocations per job, six workers on the same fullest nodes).
func TestRejectedPlansThatPlaceKeepGoing(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	const count = maxPlanAttempts + 2
	// One allocation fills a node: a pass with r allocations left sees r
	// free nodes and places one on each.
	for i := range count {
		registerNode(t, s, testNode(fmt.Sprintf("n%02d", i), 1000, 1000))
	}
	r := registerJob(t, s, testJob("web", count, 600, 100))
	eval, _ := s.State().EvalByID(nil, r.EvalID)
	other := testJob("other", 1, 600, 100)
	other.Canonicalize()

	passes, nodes := 0, count
	// After each snapshot, another worker fills all but one of the nodes
	// still free in it, and as many new nodes join: the pass places one
	// allocation and the rest are rejected.
	racing := func(context.Context, uint64) (*state.StateSnapshot, error) {
		passes++
		snap := s.snapshot()
		all, err := snap.Nodes(nil)
		if err != nil {
			return nil, err
		}
		var free []string
		for _, n := range all {
			if allocs, _ := snap.AllocsByNode(nil, n.ID); len(allocs) == 0 {
				free = append(free, n.ID)
			}
		}
		sort.Strings(free)
		for _, id := range free[:len(free)-1] {
			busy := planAlloc("busy-"+id, id, other, 600)
			if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
				return nil, err
			}
			registerNode(t, s, testNode(fmt.Sprintf("n%02d", nodes), 1000, 1000))
			nodes++
		}
		return snap, nil
	}
	if err := s.processEval(context.Background(), eval, "", racing); err != nil {
		t.Fatalf("processEval after %d passes = %v, want every allocation placed", passes, err)
	}
	if passes != count {
		t.Errorf("passes = %d, want %d (one placement each)", passes, count)
	}
	if placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun); len(placed) != count {
		t.Fatalf("placed %d allocations, want %d", len(placed), count)
	}
	all, _ := s.State().Nodes(nil)
	for _, n := range all {
		if allocs, _ := s.State().AllocsByNode(nil, n.ID); len(allocs) > 1 {
			t.Fatalf("node %s holds %d allocations: overcommitted", n.ID, len(allocs))
		}
	}
	if e, _ := s.State().EvalByID(nil, r.EvalID); e.Status != structs.EvalStatusComplete {
		t.Fatalf("eval = %s, want complete", e.Status)
	}
}

// TestPassOutlastsCompetingWorkers: other workers' plans take the node a
// pass chose, whole, more than maxPlanAttempts times in a row (six
// workers ranking the nodes alike meet on the fullest node; one wins
// each round). The pass keeps going on the state each winner left and
// places once the others are done, instead of failing after
// maxPlanAttempts and waiting 1 to 5 s for a follow-up evaluation.
func TestPassOutlastsCompetingWorkers(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n00", 1000, 1000))
	r := registerJob(t, s, testJob("web", 1, 600, 100))
	eval, _ := s.State().EvalByID(nil, r.EvalID)
	other := testJob("other", 1, 600, 100)
	other.Canonicalize()

	const rivals = maxPlanAttempts + 2
	passes := 0
	// For its first rivals passes, another worker fills the one free node
	// right after the pass's snapshot, and a new node joins.
	racing := func(context.Context, uint64) (*state.StateSnapshot, error) {
		passes++
		snap := s.snapshot()
		if passes > rivals {
			return snap, nil
		}
		id := fmt.Sprintf("n%02d", passes-1)
		busy := planAlloc("busy-"+id, id, other, 600)
		if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{busy}}); err != nil {
			return nil, err
		}
		registerNode(t, s, testNode(fmt.Sprintf("n%02d", passes), 1000, 1000))
		return snap, nil
	}
	if err := s.processEval(context.Background(), eval, "", racing); err != nil {
		t.Fatalf("processEval after %d passes = %v, want the allocation placed", passes, err)
	}
	placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
	if want := fmt.Sprintf("n%02d", rivals); len(placed) != 1 || placed[0].NodeID != want {
		t.Fatalf("placed = %v, want one allocation on %s", placed, want)
	}
	if passes != rivals+1 {
		t.Errorf("passes = %d, want %d", passes, rivals+1)
	}
}

// TestRejectedPlansGetFollowUp: a pass whose plans the applier keeps
// rejecting (other servers' workers take the nodes it ranks first) fails
// with a delayed follow-up evaluation, which places the allocations once
// its time comes. Before, the evaluation failed alone and those
// allocations were never placed (bench/cluster with 3 servers).
func TestRejectedPlansGetFollowUp(t *testing.T) {
	clock := newArmedClock()
	s := newTestServer(t, func(c *Config) { c.NumWorkers, c.Clock = -1, clock })
	registerNode(t, s, testNode("n1", 1000, 1000))
	r := registerJob(t, s, testJob("web", 1, 600, 100))
	stale := s.snapshot()
	other := testJob("other", 1, 600, 100)
	other.Canonicalize()
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{planAlloc("busy", "n1", other, 600)}}); err != nil {
		t.Fatal(err)
	}

	eval, _ := s.State().EvalByID(nil, r.EvalID)
	// A store that never catches up: every rejection looks like another
	// plan's win (the applier's state is newer than the snapshot).
	err := s.processEval(context.Background(), eval, "", func(context.Context, uint64) (*state.StateSnapshot, error) { return stale, nil })
	var rejected *planRejectedError
	if !errors.As(err, &rejected) || rejected.attempts != maxContendedAttempts {
		t.Fatalf("processEval = %v, want the plan rejected %d times", err, maxContendedAttempts)
	}
	s.failEval(eval, "", err)
	failed, _ := s.State().EvalByID(nil, r.EvalID)
	if failed.Status != structs.EvalStatusFailed || failed.NextEval == "" {
		t.Fatalf("eval = %s, next %q: want failed with a follow-up", failed.Status, failed.NextEval)
	}
	next, _ := s.State().EvalByID(nil, failed.NextEval)
	if next == nil || next.Status != structs.EvalStatusPending || next.TriggeredBy != structs.EvalTriggerRetryFailed ||
		next.PreviousEval != eval.ID || next.JobID != "web" {
		t.Fatalf("follow-up = %+v", next)
	}
	wait := next.WaitUntil.Sub(clock.Now())
	if wait < followUpDelay || wait > followUpDelay+followUpJitter {
		t.Fatalf("follow-up waits %s, want %s to %s", wait, followUpDelay, followUpDelay+followUpJitter)
	}

	// A node with room joins; the follow-up comes out of the broker at
	// its time and places there.
	registerNode(t, s, testNode("n2", 1000, 1000))
	clock.waitArmed(t, wait)
	clock.Advance(wait)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		e, _, err := s.broker.DequeueToken(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.processEval(ctx, e, "", s.snapshotAt); err != nil {
			t.Fatal(err)
		}
		if e.ID == next.ID {
			break
		}
	}
	if placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun); len(placed) != 1 || placed[0].NodeID != "n2" {
		t.Fatalf("placed = %v after the follow-up, want one alloc on n2", placed)
	}
}

// TestPlanApplierRejectsUpdateOfPreemptedAlloc: two workers' plans touch
// one allocation: the first preempts it, the second (computed before)
// updates it in place. The second must not bring it back, even though
// the node has the room.
func TestPlanApplierRejectsUpdateOfPreemptedAlloc(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	registerNode(t, s, testNode("n1", 2000, 1000))
	low := testJob("low", 1, 500, 100)
	low.Canonicalize()
	victim := planAlloc("victim", "n1", low, 500)
	if _, _, err := s.raftApply(ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{victim}}); err != nil {
		t.Fatal(err)
	}
	stored, _ := s.State().AllocByID(nil, "victim")

	high := testJob("high", 1, 800, 100)
	high.Canonicalize()
	preempting := testPlan(high, "e-high")
	preempting.AppendAlloc(planAlloc("winner", "n1", high, 800))
	preempting.AppendPreemption(stored, "winner", 1)
	if res := s.submitPlan(context.Background(), &pendingPlan{plan: preempting}); res.Err != nil || res.Rejected {
		t.Fatalf("preempting plan: %+v", res)
	}

	update := stored.Copy()
	update.Job = low.Copy()
	update.Job.Version++
	stalePlan := testPlan(low, "e-low")
	stalePlan.AppendAlloc(update)
	res := s.submitPlan(context.Background(), &pendingPlan{plan: stalePlan})
	if res.Err != nil || !res.Rejected {
		t.Fatalf("stale in-place update: %+v, want rejected", res)
	}
	if a, _ := s.State().AllocByID(nil, "victim"); a.DesiredStatus != structs.AllocDesiredStatusEvict {
		t.Fatalf("preempted alloc came back: desired %s", a.DesiredStatus)
	}
}

// TestPassCancelsCoveredEvals: a burst of evaluations for one job costs
// one scheduling pass: the pending ones written before the pass's
// snapshot are cancelled with it and leave the broker; one delayed to a
// later WaitUntil stays.
func TestPassCancelsCoveredEvals(t *testing.T) {
	clock := newArmedClock()
	s := newTestServer(t, func(c *Config) { c.NumWorkers, c.Clock = -1, clock })
	registerNode(t, s, testNode("n1", 4000, 4096))
	var ids []string
	for range 3 {
		ids = append(ids, registerJob(t, s, testJob("web", 2, 100, 100)).EvalID)
	}
	later := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: "default", JobID: "web", Type: "service",
		Priority: 50, Status: structs.EvalStatusPending, WaitUntil: clock.Now().Add(time.Hour)}
	if _, _, err := s.raftApply(EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{later}}); err != nil {
		t.Fatal(err)
	}
	if st := s.broker.Stats(); st.Ready != 1 || st.Waiting != 2 || st.Delayed != 1 {
		t.Fatalf("broker before = %+v", st)
	}
	first, _ := s.State().EvalByID(nil, ids[0])
	if err := s.processEval(context.Background(), first, "", s.snapshotAt); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.State().EvalByID(nil, ids[0]); e.Status != structs.EvalStatusComplete {
		t.Fatalf("processed eval = %s", e.Status)
	}
	for _, id := range ids[1:] {
		e, _ := s.State().EvalByID(nil, id)
		if e.Status != structs.EvalStatusCancelled || !strings.Contains(e.StatusDescription, ids[0]) {
			t.Errorf("covered eval %s = %s %q, want cancelled by %s", id, e.Status, e.StatusDescription, ids[0])
		}
	}
	if e, _ := s.State().EvalByID(nil, later.ID); e.Status != structs.EvalStatusPending {
		t.Errorf("delayed eval = %s, want pending", e.Status)
	}
	if st := s.broker.Stats(); st.Ready != 0 || st.Waiting != 0 || st.Delayed != 1 {
		t.Fatalf("broker after = %+v, want only the delayed eval", st)
	}
	if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusRun)); n != 2 {
		t.Fatalf("allocs = %d, want 2", n)
	}
}

// testPlan returns an empty plan of job for evaluation evalID.
func testPlan(job *structs.Job, evalID string) *scheduler.Plan {
	return &scheduler.Plan{EvalID: evalID, Job: job,
		NodeAllocation:  map[string][]*structs.Allocation{},
		NodeUpdate:      map[string][]*structs.Allocation{},
		NodePreemptions: map[string][]*structs.Allocation{},
		Annotations:     &structs.PlanAnnotations{},
	}
}

func TestNumWorkersDefaultsToCores(t *testing.T) {
	tests := []struct {
		set, want int
	}{
		{0, runtime.NumCPU()},
		{3, 3},
		{-1, 0},
	}
	for _, tt := range tests {
		if got := (&Config{NumWorkers: tt.set}).withDefaults().NumWorkers; got != tt.want {
			t.Errorf("NumWorkers %d -> %d, want %d", tt.set, got, tt.want)
		}
	}
}
