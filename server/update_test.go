package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// jobIdle waits until the job has no pending evaluation.
func jobIdle(t *testing.T, s *Server, jobID string) {
	t.Helper()
	waitState(t, s, "job "+jobID+" evaluated", func(ws memdb.WatchSet) (bool, string) {
		evals, err := s.State().EvalsByJob(ws, structs.DefaultNamespace, jobID)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.Status == structs.EvalStatusPending {
				return false, "eval " + e.ID + " pending"
			}
		}
		return true, ""
	})
}

func reportHealth(t *testing.T, s *Server, node string, a *structs.Allocation, healthy bool) {
	t.Helper()
	if _, err := s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: node, SecretID: "secret-" + node,
		Alloc: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning, DeploymentID: a.DeploymentID,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Now()}}}}); err != nil {
		t.Fatal(err)
	}
}

// running returns the job's allocations the server wants running, by
// version (JobModifyIndex of their job).
func running(t *testing.T, s *Server, jobID string) []*structs.Allocation {
	t.Helper()
	return allocsOf(t, s, jobID, structs.AllocDesiredStatusRun)
}

func TestUpdateInPlaceVsDestructive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("web", 2, 100, 100)
		registerJob(t, s, job)
		jobIdle(t, s, "web")
		before := running(t, s, "web")
		if len(before) != 2 {
			t.Fatalf("allocs = %d", len(before))
		}

		// Count and priority only: same allocation IDs, AllocModifyIndex bumped.
		inplace := testJob("web", 3, 100, 100)
		inplace.Priority = 70
		registerJob(t, s, inplace)
		jobIdle(t, s, "web")
		after := running(t, s, "web")
		if len(after) != 3 {
			t.Fatalf("allocs after count change = %d, want 3", len(after))
		}
		byID := map[string]*structs.Allocation{}
		for _, a := range after {
			byID[a.ID] = a
		}
		for _, a := range before {
			n, ok := byID[a.ID]
			if !ok {
				t.Fatalf("alloc %s replaced by an in-place update", a.ID)
			}
			if n.AllocModifyIndex <= a.AllocModifyIndex || n.Job.Priority != 70 {
				t.Fatalf("alloc %s not updated in place: index %d -> %d, priority %d", a.ID, a.AllocModifyIndex, n.AllocModifyIndex, n.Job.Priority)
			}
		}

		// Env changed: every allocation is replaced, same name, PreviousAllocation set.
		destructive := testJob("web", 3, 100, 100)
		destructive.Priority = 70
		destructive.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		registerJob(t, s, destructive)
		jobIdle(t, s, "web")
		final := running(t, s, "web")
		if len(final) != 3 {
			t.Fatalf("allocs after destructive change = %d", len(final))
		}
		for _, a := range final {
			old, ok := byID[a.PreviousAllocation]
			if !ok || old.Name != a.Name {
				t.Fatalf("alloc %s (%s) does not replace one of the same name: prev %q", a.ID, a.Name, a.PreviousAllocation)
			}
			if a.Job.TaskGroups[0].Tasks[0].Env["V"] != "2" {
				t.Fatalf("alloc %s runs the old version", a.ID)
			}
		}
		stopped := allocsOf(t, s, "web", structs.AllocDesiredStatusStop)
		if len(stopped) != 3 {
			t.Fatalf("stopped = %d, want 3", len(stopped))
		}
	})
}

func TestRollingUpdateMaxParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 8000, 8192))
		v1 := testJob("web", 3, 100, 100)
		v1.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute, AutoRevert: true}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")
		if n := len(running(t, s, "web")); n != 3 {
			t.Fatalf("allocs = %d", n)
		}
		// The first version is deployed too, all at once, and becomes stable
		// once its allocations are healthy.
		first, _ := s.State().LatestDeploymentByJob(nil, "default", "web")
		if first == nil || first.Status != structs.DeploymentStatusRunning || first.JobVersion != 0 {
			t.Fatalf("first version's deployment = %+v, want one running", first)
		}
		for _, a := range running(t, s, "web") {
			if a.DeploymentID != first.ID {
				t.Fatalf("alloc %s of the first version not in its deployment %s", a.ID, first.ID)
			}
			reportHealth(t, s, "n1", a, true)
		}
		jobIdle(t, s, "web")
		if d, _ := s.State().DeploymentByID(nil, first.ID); d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("first version's deployment = %s (%s), want successful", d.Status, d.StatusDescription)
		}
		if j, _ := s.State().JobByID(nil, "default", "web"); !j.Stable || j.Version != 0 {
			t.Fatalf("job version %d stable=%v, want version 0 stable", j.Version, j.Stable)
		}

		v2 := v1.Copy()
		v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		registerJob(t, s, v2)
		jobIdle(t, s, "web")
		newVersion := func() []*structs.Allocation {
			var out []*structs.Allocation
			for _, a := range running(t, s, "web") {
				if a.Job.Version == 1 {
					out = append(out, a)
				}
			}
			return out
		}
		for step := 1; step <= 3; step++ {
			placed := newVersion()
			if len(placed) != step {
				t.Fatalf("step %d: %d allocs of the new version, want %d (max_parallel 1)", step, len(placed), step)
			}
			if n := len(running(t, s, "web")); n != 3 {
				t.Fatalf("step %d: %d allocs running, want 3", step, n)
			}
			d, _ := s.State().LatestDeploymentByJob(nil, "default", "web")
			if d == nil || d.Status != structs.DeploymentStatusRunning {
				t.Fatalf("step %d: deployment %+v", step, d)
			}
			for _, a := range placed {
				if a.DeploymentID != d.ID {
					t.Fatalf("alloc %s not in deployment %s", a.ID, d.ID)
				}
				if !a.DeploymentStatus.IsHealthy() {
					reportHealth(t, s, "n1", a, true)
				}
			}
			jobIdle(t, s, "web")
		}
		d, _ := s.State().LatestDeploymentByJob(nil, "default", "web")
		if d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("deployment = %s (%s), want successful", d.Status, d.StatusDescription)
		}
		j, _ := s.State().JobByID(nil, "default", "web")
		if !j.Stable || j.Version != 1 {
			t.Fatalf("job version %d stable=%v, want version 1 stable", j.Version, j.Stable)
		}

		// Version 2 fails its first health check: auto-revert to version 1.
		v3 := v1.Copy()
		v3.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "3"}
		registerJob(t, s, v3)
		jobIdle(t, s, "web")
		var bad *structs.Allocation
		for _, a := range running(t, s, "web") {
			if a.Job.Version == 2 {
				bad = a
			}
		}
		if bad == nil {
			t.Fatal("no allocation of version 2")
		}
		reportHealth(t, s, "n1", bad, false)
		waitState(t, s, "auto-revert", func(ws memdb.WatchSet) (bool, string) {
			j, _ := s.State().JobByID(ws, "default", "web")
			return j.Version == 3 && j.TaskGroups[0].Tasks[0].Env["V"] == "2", fmt.Sprintf("version %d", j.Version)
		})
		ds, _ := s.State().DeploymentsByJob(nil, "default", "web")
		var failed *structs.Deployment
		for _, d := range ds {
			if d.JobVersion == 2 {
				failed = d
			}
		}
		if failed == nil || failed.Status != structs.DeploymentStatusFailed {
			t.Fatalf("deployment of version 2 = %+v", failed)
		}
		if want := "Failed due to unhealthy allocations - rolling back to job version 1"; failed.StatusDescription != want {
			t.Fatalf("description %q, want %q", failed.StatusDescription, want)
		}
	})
}

func TestJobVersionsAndRevert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		for i := range structs.JobTrackedVersions + 2 {
			j := testJob("web", 1, 100, 100)
			j.Meta = map[string]string{"v": fmt.Sprint(i)}
			registerJob(t, s, j)
		}
		resp, err := s.JobVersions(ctx, &structs.JobVersionsRequest{JobID: "web", Diffs: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Versions) != structs.JobTrackedVersions || resp.Versions[0].Version != 7 || resp.Versions[5].Version != 2 {
			t.Fatalf("versions: %d, first %d", len(resp.Versions), resp.Versions[0].Version)
		}
		if len(resp.Diffs) != structs.JobTrackedVersions-1 || resp.Diffs[0].Type != structs.DiffTypeEdited {
			t.Fatalf("diffs: %+v", resp.Diffs)
		}
		f := resp.Diffs[0].Fields
		if len(f) != 1 || f[0].Name != "Meta[v]" || f[0].Old != "6" || f[0].New != "7" {
			t.Fatalf("diff fields: %+v", f[0])
		}

		prior := uint64(6)
		if _, err := s.JobRevert(ctx, &structs.JobRevertRequest{JobID: "web", JobVersion: 3, EnforcePriorVersion: &prior}); structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("revert with wrong prior version: %v", err)
		}
		if _, err := s.JobRevert(ctx, &structs.JobRevertRequest{JobID: "web", JobVersion: 0}); structs.KindOf(err) != structs.KindNotFound {
			t.Fatalf("revert to a dropped version: %v", err)
		}
		prior = 7
		if _, err := s.JobRevert(ctx, &structs.JobRevertRequest{JobID: "web", JobVersion: 3, EnforcePriorVersion: &prior}); err != nil {
			t.Fatal(err)
		}
		j, _ := s.State().JobByID(nil, "default", "web")
		if j.Version != 8 || j.Meta["v"] != "3" {
			t.Fatalf("after revert: version %d meta %v", j.Version, j.Meta)
		}
		if _, err := s.JobVersions(ctx, &structs.JobVersionsRequest{JobID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Fatalf("versions of unknown job: %v", err)
		}
	})
}

func TestJobPlanDoesNotCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("n1", 4000, 4096))
		registerJob(t, s, testJob("web", 2, 100, 100))
		jobIdle(t, s, "web")
		before := s.State().LatestIndex()

		changed := testJob("web", 3, 100, 100)
		changed.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		resp, err := s.JobPlan(ctx, &structs.JobPlanRequest{Job: changed, Diff: true})
		if err != nil {
			t.Fatal(err)
		}
		if s.State().LatestIndex() != before {
			t.Fatal("plan wrote to the state")
		}
		u := resp.Annotations.DesiredTGUpdates["web"]
		if u.DestructiveUpdate != 2 || u.Place != 1 {
			t.Fatalf("annotations: %+v", u)
		}
		j, _ := s.State().JobByID(nil, "default", "web")
		if resp.JobModifyIndex != j.JobModifyIndex {
			t.Fatalf("JobModifyIndex %d, want %d", resp.JobModifyIndex, j.JobModifyIndex)
		}
		if resp.Diff.Type != structs.DiffTypeEdited || resp.Diff.TaskGroups[0].Updates[structs.UpdateTypeDestructiveUpdate] != 2 {
			t.Fatalf("diff: %+v %+v", resp.Diff, resp.Diff.TaskGroups[0])
		}

		same, err := s.JobPlan(ctx, &structs.JobPlanRequest{Job: testJob("web", 2, 100, 100), Diff: true})
		if err != nil {
			t.Fatal(err)
		}
		if same.Diff.Type != structs.DiffTypeNone || same.Annotations.DesiredTGUpdates["web"].Ignore != 2 {
			t.Fatalf("unchanged job: diff %s, %+v", same.Diff.Type, same.Annotations.DesiredTGUpdates["web"])
		}
	})
}

func TestSchedulerConfigAndPreemption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		got, err := s.SchedulerGetConfig(ctx, &structs.SchedulerConfigRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !got.SchedulerConfig.PreemptionConfig.SystemSchedulerEnabled || got.SchedulerConfig.PreemptionConfig.ServiceSchedulerEnabled {
			t.Fatalf("default config: %+v", got.SchedulerConfig)
		}

		registerNode(t, s, testNode("n1", 1000, 1000))
		low := testJob("low", 2, 400, 400)
		low.Priority = 20
		registerJob(t, s, low)
		jobIdle(t, s, "low")
		high := testJob("high", 1, 600, 600)
		high.Priority = 80
		r := registerJob(t, s, high)
		jobIdle(t, s, "high")
		if e, _ := s.State().EvalByID(nil, r.EvalID); len(e.FailedTGAllocs) == 0 {
			t.Fatal("high-priority job placed without preemption enabled")
		}

		cfg := got.SchedulerConfig
		cfg.PreemptionConfig.ServiceSchedulerEnabled = true
		set, err := s.SchedulerSetConfig(ctx, &structs.SchedulerSetConfigRequest{Config: *cfg, CAS: true})
		if err != nil || !set.Updated {
			t.Fatalf("set config: %+v %v", set, err)
		}
		stale, err := s.SchedulerSetConfig(ctx, &structs.SchedulerSetConfigRequest{Config: *cfg, CAS: true})
		if err != nil || stale.Updated {
			t.Fatalf("stale CAS: %+v %v", stale, err)
		}
		// Enabling preemption unblocks the blocked evaluation.
		waitState(t, s, "preemption", func(ws memdb.WatchSet) (bool, string) {
			a := allocsOfWatch(t, s, ws, "high", structs.AllocDesiredStatusRun)
			return len(a) == 1, fmt.Sprintf("%d allocs", len(a))
		})
		placed := running(t, s, "high")[0]
		evicted := allocsOf(t, s, "low", structs.AllocDesiredStatusEvict)
		if len(evicted) != 1 || len(placed.PreemptedAllocations) != 1 || placed.PreemptedAllocations[0] != evicted[0].ID {
			t.Fatalf("preempted %v, evicted %d", placed.PreemptedAllocations, len(evicted))
		}
		if evicted[0].PreemptedByAllocation != placed.ID || evicted[0].DesiredDescription != "Preempted by alloc "+placed.ID {
			t.Fatalf("evicted alloc: by %q, %q", evicted[0].PreemptedByAllocation, evicted[0].DesiredDescription)
		}
		// The low job got an evaluation for its lost allocation.
		waitState(t, s, "low job re-evaluated", func(ws memdb.WatchSet) (bool, string) {
			evals, _ := s.State().EvalsByJob(ws, "default", "low")
			for _, e := range evals {
				if e.TriggeredBy == structs.EvalTriggerPreemption {
					return true, ""
				}
			}
			return false, "no preemption eval"
		})
	})
}
