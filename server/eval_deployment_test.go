package server

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestEvalNamesItsDeployment: the evaluation of a service job's
// registration names the deployment it created (Nomad's `job run` follows
// the deployment through the evaluation's DeploymentID; it had none, so
// Nomad's CLI returned as soon as the evaluation completed), and so do its
// summary and the evaluations that allocation health triggers.
func TestEvalNamesItsDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 8000, 8192))
		job := testJob("web", 2, 100, 100)
		job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute}
		resp := registerJob(t, s, job)
		jobIdle(t, s, "web")
		d, _ := s.State().LatestDeploymentByJob(nil, "default", "web")
		if d == nil {
			t.Fatal("no deployment")
		}
		eval, err := s.State().EvalByID(nil, resp.EvalID)
		if err != nil || eval == nil {
			t.Fatalf("eval %s: %v", resp.EvalID, err)
		}
		if eval.DeploymentID != d.ID {
			t.Errorf("registration eval's DeploymentID = %q, want the deployment %q", eval.DeploymentID, d.ID)
		}
		if got := eval.Stub().DeploymentID; got != d.ID {
			t.Errorf("eval stub's DeploymentID = %q, want %q", got, d.ID)
		}
		for _, a := range running(t, s, "web") {
			reportHealth(t, s, "n1", a, true)
		}
		jobIdle(t, s, "web")
		evals, err := s.State().EvalsByJob(nil, "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		watcher := 0
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerDeploymentWatcher {
				watcher++
				if e.DeploymentID != d.ID {
					t.Errorf("health-triggered eval %s names deployment %q, want %q", e.ID, e.DeploymentID, d.ID)
				}
			}
		}
		if watcher == 0 {
			t.Error("no evaluation was triggered by allocation health")
		}
	})
}
