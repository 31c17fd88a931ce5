package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// fakeGCReader is a gcReader over fixed objects.
type fakeGCReader struct {
	jobs   []*structs.Job
	evals  []*structs.Evaluation
	allocs []*structs.Allocation
	deps   []*structs.Deployment
	nodes  []*structs.Node
}

func (r *fakeGCReader) Jobs(memdb.WatchSet) ([]*structs.Job, error)         { return r.jobs, nil }
func (r *fakeGCReader) Evals(memdb.WatchSet) ([]*structs.Evaluation, error) { return r.evals, nil }
func (r *fakeGCReader) Allocs(memdb.WatchSet) ([]*structs.Allocation, error) {
	return r.allocs, nil
}
func (r *fakeGCReader) Deployments(memdb.WatchSet) ([]*structs.Deployment, error) {
	return r.deps, nil
}
func (r *fakeGCReader) Nodes(memdb.WatchSet) ([]*structs.Node, error) { return r.nodes, nil }

func TestSelectGarbage(t *testing.T) {
	now := time.Unix(100000, 0)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	cut := gcCutoffs{
		Job: now.Add(-4 * time.Hour), Eval: now.Add(-time.Hour), BatchEval: now.Add(-24 * time.Hour),
		Node: now.Add(-24 * time.Hour), DeploymentIndex: 100,
	}
	job := func(id, typ string, stop bool, status string, version uint64, submitted time.Duration) *structs.Job {
		return &structs.Job{ID: id, Namespace: "default", Type: typ, Stop: stop, Status: status, Version: version, SubmitTime: ago(submitted)}
	}
	eval := func(id, jobID, typ, status string, modified time.Duration) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: "default", JobID: jobID, Type: typ, Status: status, ModifyTime: ago(modified)}
	}
	alloc := func(id, jobID, evalID, desired, client string, modified time.Duration) *structs.Allocation {
		return &structs.Allocation{ID: id, Namespace: "default", JobID: jobID, EvalID: evalID, NodeID: "n1",
			DesiredStatus: desired, ClientStatus: client, ModifyTime: ago(modified), Job: &structs.Job{Version: 1}}
	}
	const (
		run, stop            = structs.AllocDesiredStatusRun, structs.AllocDesiredStatusStop
		running, complete    = structs.AllocClientStatusRunning, structs.AllocClientStatusComplete
		failed               = structs.AllocClientStatusFailed
		evalDone, evalQueued = structs.EvalStatusComplete, structs.EvalStatusPending
		svc, batch           = structs.JobTypeService, structs.JobTypeBatch
	)
	r := &fakeGCReader{
		jobs: []*structs.Job{
			job("stopped-old", svc, true, "dead", 1, 5*time.Hour),
			job("stopped-new", svc, true, "dead", 1, time.Hour), // stopped an hour ago: stays
			job("batch-dead", batch, false, "dead", 1, 5*time.Hour),
			job("batch-dead-recent", batch, false, "dead", 1, 5*time.Hour), // its alloc finished recently
			job("svc-live", svc, false, "running", 1, 48*time.Hour),
			job("batch-live", batch, false, "running", 1, 48*time.Hour),
		},
		evals: []*structs.Evaluation{
			eval("e-stopped-old", "stopped-old", svc, evalDone, 5*time.Hour),
			eval("e-batch-dead", "batch-dead", batch, evalDone, 5*time.Hour),
			eval("e-batch-recent", "batch-dead-recent", batch, evalDone, 5*time.Hour),
			eval("e-svc-old", "svc-live", svc, evalDone, 2*time.Hour),     // its allocs were replaced: goes
			eval("e-svc-failed", "svc-live", svc, evalDone, 2*time.Hour),  // a failed alloc not replaced: stays
			eval("e-svc-running", "svc-live", svc, evalDone, 2*time.Hour), // a running alloc: stays
			eval("e-svc-recent", "svc-live", svc, evalDone, 30*time.Minute),
			eval("e-svc-queued", "svc-live", svc, evalQueued, 2*time.Hour),
			eval("e-batch-live", "batch-live", batch, evalDone, 25*time.Hour), // stays with its completed alloc, which the job still needs
		},
		allocs: []*structs.Allocation{
			alloc("a-stopped-old", "stopped-old", "e-stopped-old", stop, complete, 5*time.Hour),
			alloc("a-batch-dead", "batch-dead", "e-batch-dead", run, complete, 5*time.Hour),
			alloc("a-batch-recent", "batch-dead-recent", "e-batch-recent", run, complete, time.Hour),
			alloc("a-svc-old", "svc-live", "e-svc-old", stop, complete, 2*time.Hour),
			alloc("a-svc-failed", "svc-live", "e-svc-failed", run, failed, 2*time.Hour),
			alloc("a-svc-running", "svc-live", "e-svc-running", run, running, 2*time.Hour),
			alloc("a-batch-live", "batch-live", "e-batch-live", run, complete, 25*time.Hour),
		},
		deps: []*structs.Deployment{
			{ID: "d-old", Namespace: "default", JobID: "svc-live", Status: structs.DeploymentStatusSuccessful, CreateIndex: 10, ModifyIndex: 20},
			{ID: "d-latest", Namespace: "default", JobID: "svc-live", Status: structs.DeploymentStatusSuccessful, CreateIndex: 30, ModifyIndex: 40},
			{ID: "d-recent", Namespace: "default", JobID: "gone", Status: structs.DeploymentStatusFailed, CreateIndex: 90, ModifyIndex: 150},
			{ID: "d-gone", Namespace: "default", JobID: "gone", Status: structs.DeploymentStatusFailed, CreateIndex: 50, ModifyIndex: 60},
			{ID: "d-stopped", Namespace: "default", JobID: "stopped-old", Status: structs.DeploymentStatusCancelled, CreateIndex: 5, ModifyIndex: 6},
		},
		nodes: []*structs.Node{
			{ID: "n-down-old", Status: structs.NodeStatusDown, StatusUpdatedAt: now.Add(-48 * time.Hour).Unix()},
			{ID: "n-down-new", Status: structs.NodeStatusDown, StatusUpdatedAt: now.Add(-time.Hour).Unix()},
			{ID: "n-ready-old", Status: structs.NodeStatusReady, StatusUpdatedAt: now.Add(-48 * time.Hour).Unix()},
			{ID: "n1", Status: structs.NodeStatusDown, StatusUpdatedAt: now.Add(-48 * time.Hour).Unix()}, // runs a-svc-running
		},
	}
	g, err := selectGarbage(r, cut)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"jobs", func() []string {
			var ids []string
			for _, k := range g.Jobs {
				ids = append(ids, k.ID)
			}
			slices.Sort(ids)
			return ids
		}(), []string{"batch-dead", "stopped-old"}},
		{"evals", g.Evals, []string{"e-batch-dead", "e-stopped-old", "e-svc-old"}},
		{"allocs", g.Allocs, []string{"a-batch-dead", "a-stopped-old", "a-svc-old"}},
		{"deployments", g.Deployments, []string{"d-gone", "d-old", "d-stopped"}},
		{"nodes", g.Nodes, []string{"n-down-old"}},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestGCTimeTable(t *testing.T) {
	var tt gcTimeTable
	base := time.Unix(1000, 0)
	tt.witness(10, base)
	tt.witness(20, base.Add(time.Minute))
	tt.witness(20, base.Add(2*time.Minute)) // no new index: not recorded
	tt.witness(30, base.Add(3*time.Minute))
	for _, c := range []struct {
		at   time.Time
		want uint64
	}{
		{base.Add(-time.Second), 0},
		{base, 10},
		{base.Add(2 * time.Minute), 20},
		{base.Add(time.Hour), 30},
	} {
		if got := tt.indexAt(c.at); got != c.want {
			t.Errorf("indexAt(%v) = %d, want %d", c.at.Sub(base), got, c.want)
		}
	}
}

func TestSplitGarbage(t *testing.T) {
	g := &state.Garbage{
		Evals: []string{"e1", "e2", "e3"}, Allocs: []string{"a1", "a2", "a3", "a4"},
		Jobs: []structs.NamespacedID{{Namespace: "default", ID: "j"}},
	}
	cmds := splitGarbage(g, 3)
	if len(cmds) != 3 {
		t.Fatalf("%d commands, want 3", len(cmds))
	}
	total := 0
	for _, c := range cmds {
		n := len(c.Evals) + len(c.Allocs) + len(c.Nodes) + len(c.Jobs) + len(c.Deployments)
		if n > 3 {
			t.Fatalf("command of %d objects", n)
		}
		total += n
	}
	if total != 8 || len(cmds[2].Jobs) != 1 {
		t.Fatalf("%d objects split, want 8, the job last: %+v", total, cmds[2])
	}
}

// TestGCCollectsOnItsInterval runs a batch job to completion and steps
// the fake clock: the leader's collector deletes the job, its evaluation
// and allocations once job_gc_threshold has passed, at its next interval,
// and not before.
func TestGCCollectsOnItsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) {
			c.Clock = clock
			c.HeartbeatTTL = 24 * time.Hour
			c.GC = GCConfig{Interval: time.Minute, JobThreshold: 10 * time.Minute}
		})
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("batch", 2, 100, 100)
		job.Type = structs.JobTypeBatch
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		var updates []*structs.Allocation
		for _, a := range allocsOf(t, s, "batch", "") {
			updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete, ModifyTime: clock.Now().UnixNano(),
				TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}})
		}
		if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1", Alloc: updates}); err != nil {
			t.Fatal(err)
		}
		waitState(t, s, "job dead", func(ws memdb.WatchSet) (bool, string) {
			j, _ := s.State().JobByID(ws, "default", "batch")
			return j.Status == structs.JobStatusDead, j.Status
		})
		for range 9 {
			clock.Step(time.Minute)
		}
		if j, _ := s.State().JobByID(nil, "default", "batch"); j == nil {
			t.Fatal("job collected before job_gc_threshold")
		}
		clock.Step(2 * time.Minute)
		waitState(t, s, "job collected", func(ws memdb.WatchSet) (bool, string) {
			j, _ := s.State().JobByID(ws, "default", "batch")
			allocs, _ := s.State().AllocsByJob(ws, "default", "batch")
			evals, _ := s.State().EvalsByJob(ws, "default", "batch")
			return j == nil && len(allocs) == 0 && len(evals) == 0, fmt.Sprintf("job %v, %d allocs, %d evals", j != nil, len(allocs), len(evals))
		})
	})
}

// TestSystemGCForcesCollection stops a service job and forces a
// collection at once (system gc): the job and its work are gone whatever
// the thresholds.
func TestSystemGCForcesCollection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		r := registerJob(t, s, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		d, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web"})
		if err != nil {
			t.Fatal(err)
		}
		waitEvalStatus(t, s, d.EvalID, structs.EvalStatusComplete)
		// The client has not stopped it yet: nothing to collect.
		if _, err := s.SystemGC(ctx, &structs.SystemRequest{}); err != nil {
			t.Fatal(err)
		}
		if j, _ := s.State().JobByID(nil, "default", "web"); j == nil {
			t.Fatal("job collected while its allocation still runs")
		}
		a := allocsOf(t, s, "web", "")[0]
		if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1", Alloc: []*structs.Allocation{{
			ID: a.ID, ClientStatus: structs.AllocClientStatusComplete, ModifyTime: clock.Now().UnixNano(),
			TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SystemGC(ctx, &structs.SystemRequest{}); err != nil {
			t.Fatal(err)
		}
		if j, _ := s.State().JobByID(nil, "default", "web"); j != nil {
			t.Fatal("stopped job not collected by system gc")
		}
		if got, _ := s.State().AllocByID(nil, a.ID); got != nil {
			t.Fatal("its allocation not collected")
		}
		if _, err := s.SystemReconcileSummaries(ctx, &structs.SystemRequest{}); err != nil {
			t.Fatal(err)
		}
	})
}
