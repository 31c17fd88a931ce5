package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// ofVersion returns the job's running allocations of a job version.
func ofVersion(t *testing.T, s *Server, jobID string, version uint64) []*structs.Allocation {
	t.Helper()
	var out []*structs.Allocation
	for _, a := range running(t, s, jobID) {
		if a.Job.Version == version {
			out = append(out, a)
		}
	}
	return out
}

func latestDeployment(t *testing.T, s *Server, jobID string) *structs.Deployment {
	t.Helper()
	d, err := s.State().LatestDeploymentByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil || d == nil {
		t.Fatalf("deployment of %s: %v, %v", jobID, d, err)
	}
	return d
}

// healthyAll reports every allocation of the version healthy until the
// deployment is no longer running.
func rollOut(t *testing.T, s *Server, jobID string, version uint64) {
	t.Helper()
	for i := 0; i < 10; i++ {
		jobIdle(t, s, jobID)
		if latestDeployment(t, s, jobID).Status != structs.DeploymentStatusRunning {
			return
		}
		for _, a := range ofVersion(t, s, jobID, version) {
			if !a.DeploymentStatus.IsHealthy() {
				reportHealth(t, s, "n1", a, true)
			}
		}
	}
}

func TestDeploymentPauseResumeFail(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerNode(t, s, testNode("n1", 8000, 8192))
	v1 := testJob("web", 3, 100, 100)
	v1.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute}
	registerJob(t, s, v1)
	jobIdle(t, s, "web")
	v2 := v1.Copy()
	v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	registerJob(t, s, v2)
	jobIdle(t, s, "web")
	d := latestDeployment(t, s, "web")

	resp, err := s.DeploymentPause(ctx, &structs.DeploymentPauseRequest{DeploymentID: d.ID[:8], Pause: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "" || resp.DeploymentModifyIndex == 0 || resp.Index != resp.DeploymentModifyIndex {
		t.Fatalf("pause response %+v", resp)
	}
	if d := latestDeployment(t, s, "web"); d.Status != structs.DeploymentStatusPaused || d.StatusDescription != "Deployment is paused" {
		t.Fatalf("paused deployment = %s (%s)", d.Status, d.StatusDescription)
	}
	placed := ofVersion(t, s, "web", 1)
	if len(placed) != 1 {
		t.Fatalf("placed %d allocs of version 1, want 1", len(placed))
	}
	reportHealth(t, s, "n1", placed[0], true)
	jobIdle(t, s, "web")
	if n := len(ofVersion(t, s, "web", 1)); n != 1 {
		t.Fatalf("paused deployment placed a new batch: %d allocs of version 1", n)
	}
	if d := latestDeployment(t, s, "web"); d.Status != structs.DeploymentStatusPaused {
		t.Fatalf("deployment = %s while paused", d.Status)
	}

	resp, err = s.DeploymentPause(ctx, &structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: false})
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID == "" || resp.EvalCreateIndex == 0 {
		t.Fatalf("resume response %+v", resp)
	}
	jobIdle(t, s, "web")
	if n := len(ofVersion(t, s, "web", 1)); n != 2 {
		t.Fatalf("resumed deployment: %d allocs of version 1, want 2", n)
	}

	resp, err = s.DeploymentFail(ctx, &structs.DeploymentFailRequest{DeploymentID: d.ID})
	if err != nil {
		t.Fatal(err)
	}
	if resp.RevertedJobVersion != nil || resp.EvalID == "" {
		t.Fatalf("fail response %+v", resp)
	}
	jobIdle(t, s, "web")
	if d := latestDeployment(t, s, "web"); d.Status != structs.DeploymentStatusFailed || d.StatusDescription != "Deployment marked as failed" {
		t.Fatalf("failed deployment = %s (%s)", d.Status, d.StatusDescription)
	}
	if n := len(ofVersion(t, s, "web", 1)); n != 2 {
		t.Fatalf("failed deployment placed more: %d allocs of version 1", n)
	}

	for _, tc := range []struct {
		name string
		call func() error
		kind structs.ErrorKind
	}{
		{"fail terminal", func() error {
			_, err := s.DeploymentFail(ctx, &structs.DeploymentFailRequest{DeploymentID: d.ID})
			return err
		}, structs.KindInvalid},
		{"pause terminal", func() error {
			_, err := s.DeploymentPause(ctx, &structs.DeploymentPauseRequest{DeploymentID: d.ID, Pause: true})
			return err
		}, structs.KindInvalid},
		{"unknown", func() error {
			_, err := s.DeploymentFail(ctx, &structs.DeploymentFailRequest{DeploymentID: "nope"})
			return err
		}, structs.KindNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); structs.KindOf(err) != tc.kind {
				t.Fatalf("err = %v, want kind %v", err, tc.kind)
			}
		})
	}
}

func TestDeploymentFailAutoRevert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 8000, 8192))
		v1 := testJob("web", 2, 100, 100)
		v1.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute, AutoRevert: true}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")
		v2 := v1.Copy()
		v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		registerJob(t, s, v2)
		rollOut(t, s, "web", 1)
		v3 := v1.Copy()
		v3.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "3"}
		registerJob(t, s, v3)
		jobIdle(t, s, "web")
		d := latestDeployment(t, s, "web")
		resp, err := s.DeploymentFail(context.Background(), &structs.DeploymentFailRequest{DeploymentID: d.ID})
		if err != nil {
			t.Fatal(err)
		}
		if resp.RevertedJobVersion == nil || *resp.RevertedJobVersion != 1 || resp.EvalID == "" {
			t.Fatalf("fail response %+v", resp)
		}
		j, _ := s.State().JobByID(nil, "default", "web")
		if j.Version != 3 || j.TaskGroups[0].Tasks[0].Env["V"] != "2" {
			t.Fatalf("job version %d env %v after auto-revert", j.Version, j.TaskGroups[0].Tasks[0].Env)
		}
		failed, _ := s.State().DeploymentByID(nil, d.ID)
		if want := "Deployment marked as failed - rolling back to job version 1"; failed.StatusDescription != want {
			t.Fatalf("description %q, want %q", failed.StatusDescription, want)
		}
	})
}

func TestDeploymentProgressDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1700000000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 8000, 8192))
		v1 := testJob("web", 2, 100, 100)
		v1.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute,
			ProgressDeadline: 10 * time.Minute, AutoRevert: true}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")
		v2 := v1.Copy()
		v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		registerJob(t, s, v2)
		jobIdle(t, s, "web")
		d := latestDeployment(t, s, "web")
		if got, want := d.TaskGroups["web"].RequireProgressBy, clock.Now().Add(10*time.Minute); !got.Equal(want) {
			t.Fatalf("RequireProgressBy = %v at creation, want %v", got, want)
		}

		// A healthy allocation is progress: the deadline moves on.
		clock.Step(9 * time.Minute)
		reportHealth(t, s, "n1", ofVersion(t, s, "web", 1)[0], true)
		jobIdle(t, s, "web")
		d = latestDeployment(t, s, "web")
		if got, want := d.TaskGroups["web"].RequireProgressBy, clock.Now().Add(10*time.Minute); !got.Equal(want) {
			t.Fatalf("RequireProgressBy = %v after progress, want %v", got, want)
		}
		clock.Step(9 * time.Minute) // 18 minutes in: past the first deadline, not the second
		rollOut(t, s, "web", 1)
		if d := latestDeployment(t, s, "web"); d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("deployment = %s (%s), want successful", d.Status, d.StatusDescription)
		}

		// Version 2 makes no progress: failed at the deadline, and reverted.
		v3 := v1.Copy()
		v3.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "3"}
		registerJob(t, s, v3)
		jobIdle(t, s, "web")
		d = latestDeployment(t, s, "web")
		clock.Step(5 * time.Minute)
		if got, _ := s.State().DeploymentByID(nil, d.ID); got.Status != structs.DeploymentStatusRunning {
			t.Fatalf("deployment %s before its deadline", got.Status)
		}
		clock.Step(5*time.Minute + time.Second)
		waitState(t, s, "progress deadline failure", func(ws memdb.WatchSet) (bool, string) {
			got, _ := s.State().DeploymentByID(ws, d.ID)
			return got.Status == structs.DeploymentStatusFailed, got.Status
		})
		got, _ := s.State().DeploymentByID(nil, d.ID)
		if want := "Failed due to progress deadline - rolling back to job version 1"; got.StatusDescription != want {
			t.Fatalf("description %q, want %q", got.StatusDescription, want)
		}
		waitState(t, s, "auto-revert", func(ws memdb.WatchSet) (bool, string) {
			j, _ := s.State().JobByID(ws, "default", "web")
			return j.Version == 3 && j.TaskGroups[0].Tasks[0].Env["V"] == "2", fmt.Sprintf("version %d", j.Version)
		})
	})
}

func TestProgressDue(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name    string
		g       structs.DeploymentState
		overdue bool
		due     time.Time
	}{
		{"disabled", structs.DeploymentState{RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2}, false, time.Time{}},
		{"overdue", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2}, true, now.Add(-time.Second)},
		{"future", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(time.Second), DesiredTotal: 2}, false, now.Add(time.Second)},
		{"all healthy", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2, HealthyAllocs: 2}, false, time.Time{}},
		{"healthy canaries await promotion", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2,
			DesiredCanaries: 1, HealthyAllocs: 1}, false, time.Time{}},
		{"unhealthy canaries are late", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2,
			DesiredCanaries: 1}, true, now.Add(-time.Second)},
		{"promoted canaries must progress", structs.DeploymentState{ProgressDeadline: time.Minute, RequireProgressBy: now.Add(-time.Second), DesiredTotal: 2,
			DesiredCanaries: 1, Promoted: true, HealthyAllocs: 1}, true, now.Add(-time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			due, overdue := progressDue(&structs.Deployment{TaskGroups: map[string]*structs.DeploymentState{"g": &g}}, now)
			if overdue != tc.overdue || !due.Equal(tc.due) {
				t.Fatalf("progressDue = %v, %v; want %v, %v", due, overdue, tc.due, tc.overdue)
			}
		})
	}
}

func TestKeepDeploymentStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := state.NewStateStore()
		if err != nil {
			t.Fatal(err)
		}
		later := time.Unix(2000, 0)
		stored := []*structs.Deployment{
			{ID: "paused", Namespace: "default", JobID: "a", Status: structs.DeploymentStatusPaused, StatusDescription: "Deployment is paused",
				TaskGroups: map[string]*structs.DeploymentState{"g": {RequireProgressBy: later}}},
			{ID: "failed", Namespace: "default", JobID: "b", Status: structs.DeploymentStatusFailed},
			{ID: "running", Namespace: "default", JobID: "c", Status: structs.DeploymentStatusRunning},
		}
		if err := st.Batch(5, func(w *state.WriteTxn) error {
			for _, d := range stored {
				if err := w.UpsertDeployment(d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		plan := []*structs.Deployment{
			{ID: "paused", Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"g": {RequireProgressBy: time.Unix(1000, 0), HealthyAllocs: 1}}},
			{ID: "failed", Status: structs.DeploymentStatusRunning},
			{ID: "running", Status: structs.DeploymentStatusCancelled},
			{ID: "new", Status: structs.DeploymentStatusRunning},
		}
		got, err := keepDeploymentStatus(st.Snapshot(), plan)
		if err != nil {
			t.Fatal(err)
		}
		status := map[string]string{}
		for _, d := range got {
			status[d.ID] = d.Status
		}
		want := map[string]string{"paused": "paused", "running": "cancelled", "new": "running"}
		if fmt.Sprint(status) != fmt.Sprint(want) {
			t.Fatalf("statuses %v, want %v", status, want)
		}
		if g := got[0].TaskGroups["g"]; !g.RequireProgressBy.Equal(later) || g.HealthyAllocs != 1 {
			t.Fatalf("paused group = %+v: want the later deadline and the plan's counts", g)
		}
		if plan[0].Status != structs.DeploymentStatusRunning {
			t.Fatal("the plan's deployment was changed in place")
		}
	})
}
