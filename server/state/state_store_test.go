package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

func newStore(t *testing.T) *StateStore {
	t.Helper()
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testJob(id string) *structs.Job {
	j := &structs.Job{ID: id, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: 2,
		Tasks: []*structs.Task{{Name: "app", Driver: "mock"}},
	}}}
	j.Canonicalize()
	return j
}

func testAlloc(id string, job *structs.Job, node string, idx int) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, JobID: job.ID, Job: job, TaskGroup: "web",
		Name: structs.AllocName(job.ID, "web", idx), NodeID: node, EvalID: "eval-1",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}
}

// fired reports whether ws has fired: a commit closes the watch channels
// of what it changed before it returns, so no wait is needed either way.
func fired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

func TestJobs(t *testing.T) {
	s := newStore(t)
	ws := memdb.NewWatchSet()
	if j, err := s.JobByID(ws, "default", "web"); err != nil || j != nil {
		t.Fatalf("JobByID on empty store = %v, %v", j, err)
	}
	if err := s.UpsertJob(10, testJob("web")); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch set did not fire on UpsertJob")
	}
	j, _ := s.JobByID(nil, "default", "web")
	if j.CreateIndex != 10 || j.ModifyIndex != 10 || j.JobModifyIndex != 10 || j.Status != structs.JobStatusPending {
		t.Fatalf("job after insert = %+v", j)
	}
	up := j.Copy()
	up.TaskGroups[0].Count = 3
	if err := s.UpsertJob(11, up); err != nil {
		t.Fatal(err)
	}
	j, _ = s.JobByID(nil, "default", "web")
	if j.CreateIndex != 10 || j.JobModifyIndex != 11 {
		t.Fatalf("job after update = %+v", j)
	}
	_ = s.UpsertJob(12, testJob("worker"))
	other := testJob("web")
	other.Namespace = "prod"
	_ = s.UpsertJob(13, other)

	tests := []struct {
		name string
		fn   func() ([]*structs.Job, error)
		want int
	}{
		{"all", func() ([]*structs.Job, error) { return s.Jobs(nil) }, 3},
		{"namespace", func() ([]*structs.Job, error) { return s.JobsByNamespace(nil, "default") }, 2},
		{"prefix", func() ([]*structs.Job, error) { return s.JobsByIDPrefix(nil, "default", "we") }, 1},
		{"prefix other ns", func() ([]*structs.Job, error) { return s.JobsByIDPrefix(nil, "prod", "w") }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn()
			if err != nil || len(got) != tt.want {
				t.Fatalf("got %d jobs (%v), want %d", len(got), err, tt.want)
			}
		})
	}
	if got := s.Index(TableJobs); got != 13 {
		t.Fatalf("jobs index = %d, want 13", got)
	}
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum == nil || len(sum.Summary) != 1 {
		t.Fatalf("summary = %+v", sum)
	}
	ws = memdb.NewWatchSet()
	if sums, err := s.JobSummaries(ws); err != nil || len(sums) != 3 {
		t.Fatalf("summaries = %d, %v", len(sums), err)
	}
	_ = s.UpsertAllocs(20, []*structs.Allocation{testAlloc("x", j, "n1", 0)})
	if !fired(ws) {
		t.Fatal("watch on summaries did not fire when an alloc changed counts")
	}

	ws = memdb.NewWatchSet()
	_, _ = s.JobByID(ws, "default", "web")
	if err := s.DeleteJob(14, "default", "web"); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch set did not fire on DeleteJob")
	}
	if j, _ := s.JobByID(nil, "default", "web"); j != nil {
		t.Fatal("job still there after delete")
	}
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum != nil {
		t.Fatal("summary still there after delete")
	}
	if err := s.DeleteJob(15, "default", "web"); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete unknown job: %v", err)
	}
}

func TestAllocs(t *testing.T) {
	s := newStore(t)
	job := testJob("web")
	_ = s.UpsertJob(1, job)
	job, _ = s.JobByID(nil, "default", "web")

	ws := memdb.NewWatchSet()
	_, _ = s.AllocsByNode(ws, "n1")
	a1 := testAlloc("aaaa-1", job, "n1", 0)
	a2 := testAlloc("aaab-2", job, "n2", 1)
	if err := s.UpsertAllocs(2, []*structs.Allocation{a1, a2}); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch on node allocs did not fire")
	}
	tests := []struct {
		name string
		fn   func() ([]*structs.Allocation, error)
		want int
	}{
		{"all", func() ([]*structs.Allocation, error) { return s.Allocs(nil) }, 2},
		{"by job", func() ([]*structs.Allocation, error) { return s.AllocsByJob(nil, "default", "web") }, 2},
		{"by node", func() ([]*structs.Allocation, error) { return s.AllocsByNode(nil, "n1") }, 1},
		{"by eval", func() ([]*structs.Allocation, error) { return s.AllocsByEval(nil, "eval-1") }, 2},
		{"prefix both", func() ([]*structs.Allocation, error) { return s.AllocsByIDPrefix(nil, "aaa") }, 2},
		{"prefix one", func() ([]*structs.Allocation, error) { return s.AllocsByIDPrefix(nil, "aaab") }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn()
			if err != nil || len(got) != tt.want {
				t.Fatalf("got %d allocs (%v), want %d", len(got), err, tt.want)
			}
		})
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusRunning {
		t.Fatalf("job status = %q, want running", j.Status)
	}
	sum, _ := s.JobSummaryByID(nil, "default", "web")
	if sum.Summary["web"].Starting != 2 {
		t.Fatalf("summary = %+v", sum.Summary)
	}

	// Client update: only client fields change; AllocModifyIndex stays.
	ws = memdb.NewWatchSet()
	_, _ = s.AllocByID(ws, a1.ID)
	upd := &structs.Allocation{ID: a1.ID, ClientStatus: structs.AllocClientStatusRunning,
		ClientDescription: "ok", DesiredStatus: structs.AllocDesiredStatusStop, NodeID: "bogus",
		TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning}}, ModifyTime: 77,
		NetworkStatus: &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.2"}}
	if err := s.UpdateAllocsFromClient(3, []*structs.Allocation{upd}); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch on alloc did not fire")
	}
	got, _ := s.AllocByID(nil, a1.ID)
	if got.ClientStatus != "running" || got.ClientDescription != "ok" || got.TaskStates["app"].State != "running" ||
		got.DesiredStatus != "run" || got.NodeID != "n1" || got.ModifyIndex != 3 || got.AllocModifyIndex != 2 || got.ModifyTime != 77 {
		t.Fatalf("alloc after client update = %+v", got)
	}
	// Server update keeps the client's fields.
	stop := got.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	stop.ClientStatus = structs.AllocClientStatusPending
	if err := s.UpsertAllocs(4, []*structs.Allocation{stop}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.AllocByID(nil, a1.ID)
	if got.ClientStatus != "running" || got.DesiredStatus != "stop" || got.AllocModifyIndex != 4 || got.CreateIndex != 2 ||
		got.NetworkStatus == nil || got.NetworkStatus.Address != "172.26.64.2" {
		t.Fatalf("alloc after server update = %+v", got)
	}
	sum, _ = s.JobSummaryByID(nil, "default", "web")
	if sum.Summary["web"].Running != 1 || sum.Summary["web"].Starting != 1 {
		t.Fatalf("summary = %+v", sum.Summary)
	}
	// Unknown allocs in client updates are ignored.
	if err := s.UpdateAllocsFromClient(5, []*structs.Allocation{{ID: "nope"}}); err != nil {
		t.Fatal(err)
	}
}

func TestEvalsAndJobStatus(t *testing.T) {
	s := newStore(t)
	_ = s.UpsertJob(1, testJob("web"))
	ws := memdb.NewWatchSet()
	_, _ = s.EvalsByJob(ws, "default", "web")
	ev := &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusPending}
	if err := s.UpsertEvals(2, []*structs.Evaluation{ev}); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch on job evals did not fire")
	}
	if e, _ := s.EvalByID(nil, "e1"); e == nil || e.CreateIndex != 2 {
		t.Fatalf("eval = %+v", e)
	}
	if es, _ := s.EvalsByIDPrefix(nil, "e"); len(es) != 1 {
		t.Fatalf("prefix evals = %d", len(es))
	}
	if es, _ := s.Evals(nil); len(es) != 1 {
		t.Fatalf("evals = %d", len(es))
	}
	done := ev.Copy()
	done.Status = structs.EvalStatusComplete
	done.QueuedAllocations = map[string]int{"web": 2}
	_ = s.UpsertEvals(3, []*structs.Evaluation{done})
	e, _ := s.EvalByID(nil, "e1")
	if e.CreateIndex != 2 || e.ModifyIndex != 3 {
		t.Fatalf("eval indexes = %d/%d", e.CreateIndex, e.ModifyIndex)
	}
	// Completed eval, no allocs: the job is dead; queued shows in the summary.
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusDead {
		t.Fatalf("status = %q", j.Status)
	}
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum.Summary["web"].Queued != 2 {
		t.Fatalf("summary = %+v", sum.Summary)
	}
	stopped := testJob("web")
	stopped.Stop = true
	_ = s.UpsertJob(4, stopped)
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusDead {
		t.Fatalf("stopped status = %q", j.Status)
	}
}

func TestJobStatus(t *testing.T) {
	job := testJob("web")
	stopped := testJob("web")
	stopped.Stop = true
	run := &structs.Allocation{DesiredStatus: "run", ClientStatus: "running"}
	done := &structs.Allocation{DesiredStatus: "run", ClientStatus: "complete"}
	pending := &structs.Evaluation{Status: "pending"}
	complete := &structs.Evaluation{Status: "complete"}
	tests := []struct {
		name   string
		job    *structs.Job
		allocs []*structs.Allocation
		evals  []*structs.Evaluation
		want   string
	}{
		{"new", job, nil, nil, "pending"},
		{"eval pending", job, nil, []*structs.Evaluation{pending}, "pending"},
		{"running", job, []*structs.Allocation{run, done}, []*structs.Evaluation{complete}, "running"},
		{"all done", job, []*structs.Allocation{done}, []*structs.Evaluation{complete}, "dead"},
		{"stopped", stopped, []*structs.Allocation{run}, nil, "dead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jobStatus(tt.job, tt.allocs, tt.evals); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNodes(t *testing.T) {
	s := newStore(t)
	ws := memdb.NewWatchSet()
	_, _ = s.Nodes(ws)
	n := &structs.Node{ID: "node-1", Name: "a", Status: structs.NodeStatusReady}
	if err := s.UpsertNode(5, n); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch on nodes did not fire")
	}
	got, _ := s.NodeByID(nil, "node-1")
	if got.CreateIndex != 5 || got.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("node = %+v", got)
	}
	ws = memdb.NewWatchSet()
	_, _ = s.NodeByID(ws, "node-1")
	if err := s.UpdateNodeStatus(6, "node-1", structs.NodeStatusDown, 99); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("watch on node did not fire")
	}
	got, _ = s.NodeByID(nil, "node-1")
	if got.Status != "down" || got.StatusUpdatedAt != 99 || got.ModifyIndex != 6 || got.CreateIndex != 5 {
		t.Fatalf("node = %+v", got)
	}
	if n.Status != structs.NodeStatusReady {
		t.Fatal("UpdateNodeStatus changed the stored object in place")
	}
	// The first registration is the node's first event, which a later
	// registration keeps.
	if len(got.Events) != 1 || got.Events[0].Message != structs.NodeEventRegistered || got.Events[0].CreateIndex != 5 {
		t.Fatalf("events after registration: %+v", got.Events)
	}
	if err := s.UpsertNode(7, &structs.Node{ID: "node-1", Name: "a", Status: structs.NodeStatusReady}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.NodeByID(nil, "node-1"); len(got.Events) != 1 || got.Events[0].CreateIndex != 5 {
		t.Fatalf("events after a second registration: %+v", got.Events)
	}
	if ns, _ := s.NodesByIDPrefix(nil, "node"); len(ns) != 1 {
		t.Fatalf("prefix nodes = %d", len(ns))
	}
	if err := s.UpdateNodeStatus(8, "nope", "down", 0); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("status of unknown node: %v", err)
	}
	if err := s.DeleteNode(9, "node-1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.NodeByID(nil, "node-1"); got != nil {
		t.Fatal("node still there")
	}
	if s.Index(TableNodes) != 9 || s.LatestIndex() != 9 || s.MaxIndex(TableNodes, TableJobs) != 9 {
		t.Fatalf("indexes: %d %d", s.Index(TableNodes), s.LatestIndex())
	}
}

func TestSnapshotIsolatedAndBatchAtomic(t *testing.T) {
	s := newStore(t)
	_ = s.UpsertJob(1, testJob("web"))
	snap := s.Snapshot()
	_ = s.UpsertJob(2, testJob("other"))
	if js, _ := snap.Jobs(nil); len(js) != 1 {
		t.Fatalf("snapshot sees %d jobs, want 1", len(js))
	}
	err := s.Batch(3, func(w *WriteTxn) error {
		if err := w.UpsertJob(testJob("third")); err != nil {
			return err
		}
		return w.DeleteNode("missing")
	})
	if err == nil {
		t.Fatal("batch with failing step succeeded")
	}
	if j, _ := s.JobByID(nil, "default", "third"); j != nil {
		t.Fatal("failed batch was committed")
	}
}

func TestRestore(t *testing.T) {
	s := newStore(t)
	_ = s.UpsertJob(3, testJob("web"))
	fresh := newStore(t)
	j, _ := s.JobByID(nil, "default", "web")
	err := fresh.Restore(func(r *Restorer) error {
		if err := r.Job(j); err != nil {
			return err
		}
		return r.Index(TableJobs, 3)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fresh.JobByID(nil, "default", "web"); got == nil || fresh.Index(TableJobs) != 3 {
		t.Fatal("restore lost data")
	}
	ix, _ := fresh.Indexes()
	if ix[TableJobs] != 3 {
		t.Fatalf("indexes = %v", ix)
	}
	s.Abandon()
	s.Abandon()
	select {
	case <-s.AbandonCh():
	default:
		t.Fatal("AbandonCh not closed")
	}
}

// TestAllocDeploymentHealthFollowsDeployment: a server update that moves
// an allocation into another deployment (an in-place update) drops the
// health verdict of the old one, and a client verdict decided for the old
// deployment, arriving afterwards, is not taken as the new one's.
func TestAllocDeploymentHealthFollowsDeployment(t *testing.T) {
	s := newStore(t)
	job := testJob("web")
	_ = s.UpsertJob(1, job)
	a := testAlloc("a1", job, "n1", 0)
	a.DeploymentID = "d0"
	if err := s.UpsertAllocs(2, []*structs.Allocation{a}); err != nil {
		t.Fatal(err)
	}
	healthy := true
	verdict := &structs.AllocDeploymentStatus{Healthy: &healthy}
	if err := s.UpdateAllocsFromClient(3, []*structs.Allocation{{ID: a.ID, ClientStatus: "running", DeploymentID: "d0", DeploymentStatus: verdict}}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want *bool
	}{
		{"same deployment keeps the verdict", func() error {
			got, _ := s.AllocByID(nil, a.ID)
			c := got.Copy()
			c.DeploymentStatus = nil
			return s.UpsertAllocs(4, []*structs.Allocation{c})
		}, &healthy},
		{"in-place update into d1 drops it", func() error {
			got, _ := s.AllocByID(nil, a.ID)
			c := got.Copy()
			c.DeploymentID, c.DeploymentStatus = "d1", nil
			return s.UpsertAllocs(5, []*structs.Allocation{c})
		}, nil},
		{"a late verdict for d0 is stale", func() error {
			return s.UpdateAllocsFromClient(6, []*structs.Allocation{{ID: a.ID, ClientStatus: "running", DeploymentID: "d0", DeploymentStatus: verdict}})
		}, nil},
		{"a late verdict outside any deployment does not count for d1", func() error {
			return s.UpdateAllocsFromClient(7, []*structs.Allocation{{ID: a.ID, ClientStatus: "running", DeploymentStatus: verdict}})
		}, nil},
		{"a verdict for d1 counts", func() error {
			return s.UpdateAllocsFromClient(8, []*structs.Allocation{{ID: a.ID, ClientStatus: "running", DeploymentID: "d1", DeploymentStatus: verdict}})
		}, &healthy},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, _ := s.AllocByID(nil, a.ID)
		var h *bool
		if got.DeploymentStatus != nil {
			h = got.DeploymentStatus.Healthy
		}
		if (h == nil) != (st.want == nil) || (h != nil && *h != *st.want) {
			t.Fatalf("%s: deployment status = %+v, want healthy %v", st.name, got.DeploymentStatus, st.want)
		}
	}
}

// TestClientVerdictNamesItsDeployment: a client's health verdict counts
// only for the deployment it names, "" (a verdict outside any deployment,
// the migrate block's) included; the rest of a dropped verdict's update
// still applies.
func TestClientVerdictNamesItsDeployment(t *testing.T) {
	cases := []struct {
		name      string
		allocDep  string // the alloc's deployment
		verdictOf string // the deployment the client's verdict is for
		counts    bool
	}{
		{"alloc in D, verdict for D", "D", "D", true},
		{"alloc in D, verdict outside any deployment", "D", "", false},
		{"alloc in D, verdict for an older deployment", "D", "D0", false},
		{"alloc outside deployments, migrate verdict", "", "", true},
		{"alloc outside deployments, verdict for D", "", "D", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			job := testJob("web")
			if err := s.UpsertJob(1, job); err != nil {
				t.Fatal(err)
			}
			a := testAlloc("a1", job, "n1", 0)
			a.DeploymentID = c.allocDep
			if err := s.UpsertAllocs(2, []*structs.Allocation{a}); err != nil {
				t.Fatal(err)
			}
			healthy := true
			u := &structs.Allocation{
				ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
				TaskStates:       map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning}},
				DeploymentID:     c.verdictOf,
				DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy},
			}
			if err := s.UpdateAllocsFromClient(3, []*structs.Allocation{u}); err != nil {
				t.Fatal(err)
			}
			got, err := s.AllocByID(nil, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if counted := got.DeploymentStatus.IsHealthy(); counted != c.counts {
				t.Errorf("verdict counted = %v, want %v (deployment status %+v)", counted, c.counts, got.DeploymentStatus)
			}
			if got.ClientStatus != structs.AllocClientStatusRunning || got.TaskStates["app"] == nil {
				t.Errorf("client status %q, task states %v: the rest of the update must apply", got.ClientStatus, got.TaskStates)
			}
			if got.DeploymentID != c.allocDep {
				t.Errorf("alloc deployment = %q, want %q: a client update never moves it", got.DeploymentID, c.allocDep)
			}
		})
	}
}
