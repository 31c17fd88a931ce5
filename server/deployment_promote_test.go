package server

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// canaries returns the job's running allocations flagged canary.
func canaries(t *testing.T, s *Server, jobID string) []*structs.Allocation {
	t.Helper()
	var out []*structs.Allocation
	for _, a := range running(t, s, jobID) {
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			out = append(out, a)
		}
	}
	return out
}

func TestDeploymentCanaryPromote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("n1", 8000, 8192))
		v0 := testJob("web", 3, 100, 100)
		v0.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, HealthyDeadline: time.Minute}
		registerJob(t, s, v0)
		rollOut(t, s, "web", 0)
		v1 := v0.Copy()
		v1.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "1"}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")

		// One canary beside the three old allocations.
		c := canaries(t, s, "web")
		if len(c) != 1 || c[0].Job.Version != 1 || c[0].Name != "web.web[0]" {
			t.Fatalf("canaries %v, want one of version 1 named web.web[0]", c)
		}
		if n := len(ofVersion(t, s, "web", 0)); n != 3 {
			t.Fatalf("%d old allocations run beside the canary, want 3", n)
		}
		d := latestDeployment(t, s, "web")
		if g := d.TaskGroups["web"]; g.DesiredCanaries != 1 || len(g.PlacedCanaries) != 1 || g.PlacedCanaries[0] != c[0].ID || g.Promoted {
			t.Fatalf("deployment group %+v", g)
		}
		if d.StatusDescription != "Deployment is running but requires manual promotion" {
			t.Fatalf("description %q", d.StatusDescription)
		}

		// Not healthy yet: the promotion is refused.
		_, err := s.DeploymentPromote(ctx, &structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true})
		if structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("promote of an unhealthy canary: %v", err)
		}
		// Healthy (the client's report keeps it a canary): it still
		// waits for the promotion.
		reportHealth(t, s, "n1", c[0], true)
		jobIdle(t, s, "web")
		if len(canaries(t, s, "web")) != 1 || len(ofVersion(t, s, "web", 0)) != 3 {
			t.Fatal("a healthy canary was promoted without auto_promote")
		}

		for _, tc := range []struct {
			name string
			req  structs.DeploymentPromoteRequest
		}{
			{"no group named", structs.DeploymentPromoteRequest{DeploymentID: d.ID}},
			{"unknown group", structs.DeploymentPromoteRequest{DeploymentID: d.ID, Groups: []string{"nope"}}},
		} {
			if _, err := s.DeploymentPromote(ctx, &tc.req); structs.KindOf(err) != structs.KindInvalid {
				t.Fatalf("%s: err = %v, want invalid", tc.name, err)
			}
		}
		resp, err := s.DeploymentPromote(ctx, &structs.DeploymentPromoteRequest{DeploymentID: d.ID[:8], Groups: []string{"web"}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.EvalID == "" || resp.EvalCreateIndex == 0 || resp.DeploymentModifyIndex == 0 {
			t.Fatalf("promote response %+v", resp)
		}
		jobIdle(t, s, "web")
		if got, _ := s.State().AllocByID(nil, c[0].ID); got.DeploymentStatus.Canary || !got.DeploymentStatus.IsHealthy() {
			t.Fatalf("promoted canary's status %+v: want healthy and no longer a canary", got.DeploymentStatus)
		}
		old := ofVersion(t, s, "web", 0)
		if len(old) != 1 {
			t.Fatalf("after promotion %d old allocations run, want 1 (web[0] replaced by the canary, web[1] rolling)", len(old))
		}
		rollOut(t, s, "web", 1)
		d = latestDeployment(t, s, "web")
		if d.Status != structs.DeploymentStatusSuccessful || !d.TaskGroups["web"].Promoted {
			t.Fatalf("deployment %s (%s) promoted=%t", d.Status, d.StatusDescription, d.TaskGroups["web"].Promoted)
		}
		if n := len(ofVersion(t, s, "web", 1)); n != 3 || len(running(t, s, "web")) != 3 {
			t.Fatalf("%d allocations of version 1 of %d running, want 3 of 3", n, len(running(t, s, "web")))
		}
	})
}

func TestDeploymentCanaryAutoPromoteAndRevert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 8000, 8192))
		v0 := testJob("web", 2, 100, 100)
		v0.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, AutoPromote: true, AutoRevert: true, HealthyDeadline: time.Minute}
		registerJob(t, s, v0)
		rollOut(t, s, "web", 0)

		// auto_promote: the healthy canary is promoted by the scheduler.
		v1 := v0.Copy()
		v1.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "1"}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")
		if d := latestDeployment(t, s, "web"); d.StatusDescription != "Deployment is running pending automatic promotion" {
			t.Fatalf("description %q", d.StatusDescription)
		}
		c := canaries(t, s, "web")
		if len(c) != 1 {
			t.Fatalf("%d canaries, want 1", len(c))
		}
		reportHealth(t, s, "n1", c[0], true)
		rollOut(t, s, "web", 1)
		if d := latestDeployment(t, s, "web"); d.Status != structs.DeploymentStatusSuccessful || !d.TaskGroups["web"].Promoted {
			t.Fatalf("deployment %s, promoted=%t", d.Status, d.TaskGroups["web"].Promoted)
		}
		if j, _ := s.State().JobByIDAndVersion(nil, "default", "web", 1); !j.Stable {
			t.Fatal("version 1 not stable after its deployment succeeded")
		}

		// An unhealthy canary fails the deployment: reverted to version 1.
		v2 := v1.Copy()
		v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		registerJob(t, s, v2)
		jobIdle(t, s, "web")
		c = canaries(t, s, "web")
		if len(c) != 1 || c[0].Job.Version != 2 {
			t.Fatalf("canaries %v, want one of version 2", c)
		}
		d := latestDeployment(t, s, "web")
		reportHealth(t, s, "n1", c[0], false)
		waitState(t, s, "auto-revert", func(ws memdb.WatchSet) (bool, string) {
			j, _ := s.State().JobByID(ws, "default", "web")
			return j.Version == 3 && j.TaskGroups[0].Tasks[0].Env["V"] == "1", j.TaskGroups[0].Tasks[0].Env["V"]
		})
		jobIdle(t, s, "web")
		if got, _ := s.State().DeploymentByID(nil, d.ID); got.Status != structs.DeploymentStatusFailed {
			t.Fatalf("canary deployment %s", got.Status)
		}
		all := running(t, s, "web")
		if len(all) != 2 {
			t.Fatalf("%d allocations run after the revert, want 2", len(all))
		}
		for _, a := range all {
			if a.ID == c[0].ID || a.Job.Version != 3 {
				t.Fatalf("after the revert %s (version %d) runs; want the old allocations updated in place to version 3", a.ID, a.Job.Version)
			}
		}
	})
}

// TestDeploymentCanaryProgressDeadline: healthy canaries waiting for a
// promotion past the progress deadline do not fail the deployment, and
// the promotion gives the group a fresh deadline.
func TestDeploymentCanaryProgressDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{now: time.Unix(1700000000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 8000, 8192))
		v0 := testJob("web", 2, 100, 100)
		v0.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute}
		registerJob(t, s, v0)
		rollOut(t, s, "web", 0)
		v1 := v0.Copy()
		v1.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "1"}
		registerJob(t, s, v1)
		jobIdle(t, s, "web")
		reportHealth(t, s, "n1", canaries(t, s, "web")[0], true)
		jobIdle(t, s, "web")

		clock.Step(30 * time.Minute) // nobody promotes for a while
		d := latestDeployment(t, s, "web")
		if d.Status != structs.DeploymentStatusRunning {
			t.Fatalf("deployment awaiting promotion = %s (%s), want running", d.Status, d.StatusDescription)
		}
		if _, err := s.DeploymentPromote(context.Background(), &structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true}); err != nil {
			t.Fatal(err)
		}
		jobIdle(t, s, "web")
		synctest.Wait()
		d = latestDeployment(t, s, "web")
		if want := clock.Now().Add(10 * time.Minute); d.Status != structs.DeploymentStatusRunning || d.TaskGroups["web"].RequireProgressBy.Before(want) {
			t.Fatalf("after promotion: %s (%s), RequireProgressBy %v, want running and %v", d.Status, d.StatusDescription,
				d.TaskGroups["web"].RequireProgressBy, want)
		}
	})
}
