package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

func TestServerStartsAsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		if s.Leader() == "" {
			t.Fatal("no leader")
		}
		if p := s.Peers(); len(p) != 1 {
			t.Fatalf("peers = %v", p)
		}
		st := s.Stats()
		if st["raft_state"] != "Leader" || st["leader"] != "true" {
			t.Fatalf("stats = %v", st)
		}
	})
}

func TestJobRegisterPlacesAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("node-1", 4000, 4096))
		resp := registerJob(t, s, testJob("web", 2, 500, 256))
		if resp.EvalID == "" || resp.Index == 0 || resp.JobModifyIndex != resp.Index || resp.EvalCreateIndex != resp.Index {
			t.Fatalf("register response = %+v", resp)
		}
		eval := waitEvalStatus(t, s, resp.EvalID, structs.EvalStatusComplete)
		if len(eval.FailedTGAllocs) != 0 || eval.JobModifyIndex != resp.JobModifyIndex {
			t.Fatalf("eval = %+v", eval)
		}
		allocs := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(allocs) != 2 {
			t.Fatalf("allocs = %d", len(allocs))
		}
		for _, a := range allocs {
			if a.NodeID != "node-1" || a.ClientStatus != structs.AllocClientStatusPending || a.EvalID != resp.EvalID || a.Job == nil {
				t.Fatalf("alloc = %+v", a)
			}
			if a.Job.TaskGroups[0].Tasks[0].Config["run_for"] != "10s" {
				t.Fatalf("driver config lost: %#v", a.Job.TaskGroups[0].Tasks[0].Config)
			}
		}

		job, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
		if err != nil || job.Job.Status != structs.JobStatusRunning || job.Job.Version != 0 || job.Index == 0 || !job.KnownLeader {
			t.Fatalf("JobGet = %+v, %v", job, err)
		}
		list, err := s.JobList(ctx, &structs.JobListRequest{})
		if err != nil || len(list.Jobs) != 1 || list.Jobs[0].JobSummary.Summary["web"].Starting != 2 {
			t.Fatalf("JobList = %+v, %v", list, err)
		}
		sum, err := s.JobSummary(ctx, &structs.JobSpecificRequest{JobID: "web"})
		if err != nil || sum.JobSummary.Summary["web"].Starting != 2 || sum.Index == 0 {
			t.Fatalf("JobSummary = %+v, %v", sum, err)
		}
		if _, err := s.JobSummary(ctx, &structs.JobSpecificRequest{JobID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Fatalf("JobSummary of unknown job: %v", err)
		}
		ja, err := s.JobAllocations(ctx, &structs.JobSpecificRequest{JobID: "web"})
		if err != nil || len(ja.Allocations) != 2 {
			t.Fatalf("JobAllocations = %+v, %v", ja, err)
		}
		je, err := s.JobEvaluations(ctx, &structs.JobSpecificRequest{JobID: "web"})
		if err != nil || len(je.Evaluations) != 1 {
			t.Fatalf("JobEvaluations = %+v, %v", je, err)
		}
		al, err := s.AllocList(ctx, &structs.AllocListRequest{})
		if err != nil || len(al.Allocations) != 2 {
			t.Fatalf("AllocList = %+v, %v", al, err)
		}
		ag, err := s.AllocGet(ctx, &structs.AllocSpecificRequest{AllocID: allocs[0].ID[:8]})
		if err != nil || ag.Alloc.ID != allocs[0].ID {
			t.Fatalf("AllocGet by prefix = %+v, %v", ag, err)
		}
		el, err := s.EvalList(ctx, &structs.EvalListRequest{})
		if err != nil || len(el.Evaluations) != 1 {
			t.Fatalf("EvalList = %+v, %v", el, err)
		}
		eg, err := s.EvalGet(ctx, &structs.EvalSpecificRequest{EvalID: resp.EvalID})
		if err != nil || eg.Eval.ID != resp.EvalID {
			t.Fatalf("EvalGet = %+v, %v", eg, err)
		}
		nl, err := s.NodeList(ctx, &structs.NodeListRequest{})
		if err != nil || len(nl.Nodes) != 1 {
			t.Fatalf("NodeList = %+v, %v", nl, err)
		}
		ng, err := s.NodeGet(ctx, &structs.NodeSpecificRequest{NodeID: "node"})
		if err != nil || ng.Node.ID != "node-1" {
			t.Fatalf("NodeGet = %+v, %v", ng, err)
		}

		// The client's view: its allocs, then the full ones, then its updates.
		ca, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "node-1", SecretID: "secret-node-1"})
		if err != nil || len(ca.Allocs) != 2 {
			t.Fatalf("NodeGetClientAllocs = %+v, %v", ca, err)
		}
		got, err := s.AllocGetAllocs(ctx, &structs.AllocsGetRequest{AllocIDs: []string{allocs[0].ID, "unknown"}})
		if err != nil || len(got.Allocs) != 1 || got.Allocs[0].ID != allocs[0].ID {
			t.Fatalf("AllocGetAllocs = %+v, %v", got, err)
		}
		before := allocs[0]
		upd := &structs.Allocation{ID: before.ID, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning, StartedAt: time.Unix(100, 0).UTC()}}}
		if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "node-1", SecretID: "secret-node-1", Alloc: []*structs.Allocation{upd}}); err != nil {
			t.Fatal(err)
		}
		after, _ := s.State().AllocByID(nil, before.ID)
		if after.ClientStatus != structs.AllocClientStatusRunning || after.AllocModifyIndex != before.AllocModifyIndex ||
			!after.TaskStates["app"].StartedAt.Equal(time.Unix(100, 0)) {
			t.Fatalf("alloc after client update = %+v", after)
		}
		ca2, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "node-1", SecretID: "secret-node-1"})
		if err != nil || ca2.Allocs[before.ID] != ca.Allocs[before.ID] {
			t.Fatalf("client update changed AllocModifyIndex: %v vs %v", ca2.Allocs, ca.Allocs)
		}
	})
}

func TestJobRegisterUnchangedKeepsVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("node-1", 4000, 4096))
		r1 := registerJob(t, s, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s, r1.EvalID, structs.EvalStatusComplete)
		r2 := registerJob(t, s, testJob("web", 1, 100, 100))
		if r2.JobModifyIndex != r1.JobModifyIndex {
			t.Fatalf("unchanged job got a new JobModifyIndex: %d vs %d", r2.JobModifyIndex, r1.JobModifyIndex)
		}
		waitEvalStatus(t, s, r2.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, "web", "")); n != 1 {
			t.Fatalf("allocs = %d, want the same 1", n)
		}
		j, _ := s.State().JobByID(nil, "default", "web")
		changed := testJob("web", 1, 100, 100)
		changed.TaskGroups[0].Tasks[0].Env = map[string]string{"X": "1"}
		r3 := registerJob(t, s, changed)
		j3, _ := s.State().JobByID(nil, "default", "web")
		if j3.Version != j.Version+1 || r3.JobModifyIndex == r1.JobModifyIndex {
			t.Fatalf("changed job: version %d -> %d", j.Version, j3.Version)
		}
		waitEvalStatus(t, s, r3.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusStop)); n != 1 {
			t.Fatalf("stopped allocs after destructive update = %d", n)
		}
	})
}

func TestCountDecreaseStopsAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("node-1", 4000, 4096))
		r := registerJob(t, s, testJob("web", 3, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		r = registerJob(t, s, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		running := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		stopped := allocsOf(t, s, "web", structs.AllocDesiredStatusStop)
		if len(running) != 1 || len(stopped) != 2 {
			t.Fatalf("running %d, stopped %d", len(running), len(stopped))
		}
		if running[0].Index() != 0 || running[0].Job.JobModifyIndex != r.JobModifyIndex {
			t.Fatalf("kept alloc = %s at job index %d", running[0].Name, running[0].Job.JobModifyIndex)
		}
	})
}

func TestJobDeregister(t *testing.T) {
	tests := []struct {
		name  string
		purge bool
	}{{"stop", false}, {"purge", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, nil)
			ctx := context.Background()
			registerNode(t, s, testNode("node-1", 4000, 4096))
			r := registerJob(t, s, testJob("web", 2, 100, 100))
			waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
			d, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "web", Purge: tt.purge})
			if err != nil {
				t.Fatal(err)
			}
			waitEvalStatus(t, s, d.EvalID, structs.EvalStatusComplete)
			if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusStop)); n != 2 {
				t.Fatalf("stopped allocs = %d", n)
			}
			j, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
			if tt.purge {
				if structs.KindOf(err) != structs.KindNotFound {
					t.Fatalf("purged job: %+v, %v", j, err)
				}
				return
			}
			if err != nil || !j.Job.Stop || j.Job.Status != structs.JobStatusDead || j.Job.Version != 1 {
				t.Fatalf("stopped job = %+v, %v", j.Job, err)
			}
		})
	}
	// As Nomad: stopping a job that does not exist succeeds, with no
	// evaluation and nothing written.
	s := newTestServer(t, nil)
	before := s.State().Index(state.TableEvals)
	d, err := s.JobDeregister(context.Background(), &structs.JobDeregisterRequest{JobID: "nope"})
	if err != nil || d.EvalID != "" {
		t.Fatalf("deregister unknown job: %+v, %v", d, err)
	}
	if after := s.State().Index(state.TableEvals); after != before {
		t.Errorf("evals index %d -> %d: something was written", before, after)
	}
}

func TestJobRegisterErrors(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	invalid := testJob("bad", 1, 100, 100)
	invalid.TaskGroups[0].Tasks[0].Driver = ""
	_, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: invalid})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "driver") {
		t.Fatalf("invalid job: %v", err)
	}
	if _, err := s.JobRegister(ctx, &structs.JobRegisterRequest{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("missing job: %v", err)
	}

	r := registerJob(t, s, testJob("web", 1, 100, 100))
	tests := []struct {
		name  string
		index uint64
		kind  structs.ErrorKind
		ok    bool
	}{
		{"create-only on existing", 0, structs.KindConflict, false},
		{"stale index", r.JobModifyIndex + 100, structs.KindConflict, false},
		{"matching index", r.JobModifyIndex, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob("web", 2, 100, 100)
			_, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: job, EnforceIndex: true, JobModifyIndex: tt.index})
			if tt.ok != (err == nil) || (!tt.ok && structs.KindOf(err) != tt.kind) {
				t.Fatalf("err = %v (kind %v)", err, structs.KindOf(err))
			}
			// Nomad's clients match this prefix (api.RegisterEnforceIndexErrPrefix).
			if !tt.ok && !strings.HasPrefix(err.Error(), "Enforcing job modify index") {
				t.Errorf("err = %q: want Nomad's prefix", err)
			}
		})
	}
	_, err = s.JobRegister(ctx, &structs.JobRegisterRequest{Job: testJob("fresh", 1, 100, 100), EnforceIndex: true})
	if err != nil {
		t.Fatalf("create-only of a new job: %v", err)
	}
}

func TestPlacementFailureBlocksThenUnblocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("small", 500, 512))
		r := registerJob(t, s, testJob("big", 1, 2000, 256))
		eval := waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		m := eval.FailedTGAllocs["web"]
		if m == nil || m.DimensionExhausted["cpu"] != 1 || eval.BlockedEval == "" {
			t.Fatalf("eval after failed placement = %+v (metric %+v)", eval, m)
		}
		blocked := waitEvalStatus(t, s, eval.BlockedEval, structs.EvalStatusBlocked)
		if blocked.TriggeredBy != structs.EvalTriggerQueuedAllocs || blocked.PreviousEval != eval.ID {
			t.Fatalf("blocked eval = %+v", blocked)
		}
		if j, _ := s.State().JobByID(nil, "default", "big"); j.Status != structs.JobStatusPending {
			t.Fatalf("job status = %q, want pending", j.Status)
		}
		if sum, _ := s.State().JobSummaryByID(nil, "default", "big"); sum.Summary["web"].Queued != 1 {
			t.Fatalf("summary = %+v", sum.Summary)
		}

		registerNode(t, s, testNode("large", 8000, 8192))
		waitEvalStatus(t, s, eval.BlockedEval, structs.EvalStatusComplete)
		allocs := allocsOf(t, s, "big", structs.AllocDesiredStatusRun)
		if len(allocs) != 1 || allocs[0].NodeID != "large" {
			t.Fatalf("allocs after unblock = %+v", allocs)
		}
	})
}

func TestBlockedEvalStaysBlockedUntilEnough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("small", 500, 512))
		r := registerJob(t, s, testJob("big", 1, 2000, 256))
		eval := waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		first := eval.BlockedEval
		before, _ := s.State().EvalByID(nil, first)
		// Another small node: the blocked eval runs again and stays blocked.
		registerNode(t, s, testNode("small-2", 500, 512))
		waitState(t, s, "blocked eval re-evaluated", func(ws memdb.WatchSet) (bool, string) {
			e, _ := s.State().EvalByID(ws, first)
			return e.ModifyIndex > before.ModifyIndex && e.Status == structs.EvalStatusBlocked, e.Status
		})
		// A new registration supersedes it.
		r2 := registerJob(t, s, testJob("big", 1, 1900, 256))
		e2 := waitEvalStatus(t, s, r2.EvalID, structs.EvalStatusComplete)
		waitEvalStatus(t, s, first, structs.EvalStatusCancelled)
		waitEvalStatus(t, s, e2.BlockedEval, structs.EvalStatusBlocked)
	})
}

func TestHeartbeatExpiryMarksNodeDownAndReplaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, func(c *Config) { c.HeartbeatTTL = 300 * time.Millisecond })
		ctx := context.Background()
		resp := registerNode(t, s, testNode("n1", 4000, 4096))
		if resp.HeartbeatTTL < 300*time.Millisecond || resp.HeartbeatTTL > 375*time.Millisecond {
			t.Fatalf("TTL = %v", resp.HeartbeatTTL)
		}
		r := registerJob(t, s, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		first := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)[0]

		// A second node that keeps heartbeating until n1 is down.
		registerNode(t, s, testNode("n2", 4000, 4096))
		// n2 heartbeats every 100ms of the bubble's time, well within its
		// TTL, until n1's TTL (no grace) has passed.
		heartbeatN2 := func() {
			t.Helper()
			if _, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "n2", SecretID: "secret-n2", Status: structs.NodeStatusReady}); err != nil {
				t.Fatal(err)
			}
		}
		for passed := time.Duration(0); passed <= resp.HeartbeatTTL; passed += 100 * time.Millisecond {
			heartbeatN2()
			time.Sleep(100 * time.Millisecond) // the bubble's time: n2 keeps heartbeating
		}
		heartbeatN2()
		settled(t, "n1 down", func() (bool, string) {
			n, _ := s.State().NodeByID(nil, "n1")
			return n.Status == structs.NodeStatusDown, n.Status
		})
		lost, _ := s.State().AllocByID(nil, first.ID)
		if lost.ClientStatus != structs.AllocClientStatusLost {
			t.Fatalf("alloc on down node = %s", lost.ClientStatus)
		}
		waitState(t, s, "replacement on n2", func(ws memdb.WatchSet) (bool, string) {
			run := allocsOfWatch(t, s, ws, "web", structs.AllocDesiredStatusRun)
			if len(run) != 1 {
				return false, fmt.Sprintf("%d running", len(run))
			}
			return run[0].NodeID == "n2" && run[0].PreviousAllocation == first.ID, run[0].NodeID
		})
		stopped, _ := s.State().AllocByID(nil, first.ID)
		if stopped.DesiredStatus != structs.AllocDesiredStatusStop {
			t.Fatalf("lost alloc desired status = %s", stopped.DesiredStatus)
		}
		// Heartbeats of unknown nodes or with a wrong secret fail.
		if _, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "nope", SecretID: "s"}); structs.KindOf(err) != structs.KindNotFound {
			t.Fatalf("unknown node heartbeat: %v", err)
		}
		if _, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "n2", SecretID: "wrong"}); structs.KindOf(err) != structs.KindPermission {
			t.Fatalf("wrong secret: %v, want a permission error", err)
		}
	})
}

func TestBlockingQuery(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerNode(t, s, testNode("n1", 4000, 4096))
	first, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1", SecretID: "secret-n1"})
	if err != nil || first.Index == 0 {
		t.Fatalf("first query = %+v, %v", first, err)
	}

	t.Run("times out", func(t *testing.T) {
		start := time.Now()
		resp, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1", SecretID: "secret-n1",
			QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: 100 * time.Millisecond}})
		if err != nil || resp.Index != first.Index || len(resp.Allocs) != 0 {
			t.Fatalf("resp = %+v, %v", resp, err)
		}
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("returned after %v", d)
		}
	})

	t.Run("returns on change", func(t *testing.T) {
		type result struct {
			resp *structs.NodeClientAllocsResponse
			err  error
		}
		done := make(chan result, 1)
		go func() {
			resp, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1", SecretID: "secret-n1",
				QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: time.Minute}})
			done <- result{resp, err}
		}()
		registerJob(t, s, testJob("web", 1, 100, 100))
		select {
		case r := <-done:
			if r.err != nil || len(r.resp.Allocs) != 1 || r.resp.Index <= first.Index {
				t.Fatalf("resp = %+v, %v", r.resp, r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("blocking query did not return on change")
		}
	})

	t.Run("honours cancellation", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := s.JobList(cctx, &structs.JobListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 1 << 40}})
			done <- err
		}()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("cancelled query did not return")
		}
	})
}

func TestGetByPrefix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("abc-1", 1000, 1000))
		registerNode(t, s, testNode("abc-2", 1000, 1000))
		tests := []struct {
			id   string
			want string
			kind structs.ErrorKind
		}{
			{"abc-1", "abc-1", 0},
			{"abc-2", "abc-2", 0},
			{"abc", "", structs.KindInvalid},
			{"zzz", "", structs.KindNotFound},
		}
		for _, tt := range tests {
			resp, err := s.NodeGet(ctx, &structs.NodeSpecificRequest{NodeID: tt.id})
			if tt.want != "" {
				if err != nil || resp.Node.ID != tt.want {
					t.Errorf("%s: %+v, %v", tt.id, resp, err)
				}
				continue
			}
			if structs.KindOf(err) != tt.kind {
				t.Errorf("%s: err %v, want kind %v", tt.id, err, tt.kind)
			}
			if tt.kind == structs.KindInvalid && !strings.Contains(err.Error(), "abc-1, abc-2") {
				t.Errorf("ambiguous prefix error does not list matches: %v", err)
			}
		}
		if _, err := s.AllocGet(ctx, &structs.AllocSpecificRequest{AllocID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("unknown alloc: %v", err)
		}
		if _, err := s.EvalGet(ctx, &structs.EvalSpecificRequest{EvalID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("unknown eval: %v", err)
		}
	})
}

func TestSystemJobOnEveryNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 1000, 1000))
		job := testJob("sys", 1, 100, 100)
		job.Type = structs.JobTypeSystem
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		reg := registerNode(t, s, testNode("n2", 1000, 1000))
		if len(reg.EvalIDs) != 1 {
			t.Fatalf("node registration evals = %v", reg.EvalIDs)
		}
		waitEvalStatus(t, s, reg.EvalIDs[0], structs.EvalStatusComplete)
		allocs := allocsOf(t, s, "sys", structs.AllocDesiredStatusRun)
		if len(allocs) != 2 || allocs[0].NodeID == allocs[1].NodeID {
			t.Fatalf("system allocs = %d", len(allocs))
		}
	})
}
