package e2e

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadAPIClientUpdates drives plans, versions, reverts, deployments
// and the scheduler configuration with HashiCorp's Go client: drover's
// answers must decode into its types with the values it expects.
func TestNomadAPIClientUpdates(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}

	cfg, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		t.Fatalf("get scheduler config: %v", err)
	}
	if sc := cfg.SchedulerConfig; sc == nil || sc.SchedulerAlgorithm != nomad.SchedulerAlgorithmBinpack ||
		!sc.PreemptionConfig.SystemSchedulerEnabled || sc.PreemptionConfig.ServiceSchedulerEnabled {
		t.Fatalf("default scheduler config: %+v", cfg.SchedulerConfig)
	}
	next := *cfg.SchedulerConfig
	next.PreemptionConfig.BatchSchedulerEnabled = true
	set, _, err := c.Operator().SchedulerCASConfiguration(&next, nil)
	if err != nil || !set.Updated {
		t.Fatalf("CAS scheduler config: %+v %v", set, err)
	}
	stale, _, err := c.Operator().SchedulerCASConfiguration(&next, nil)
	if err != nil || stale.Updated {
		t.Fatalf("stale CAS: %+v %v", stale, err)
	}

	job := nomad.NewServiceJob("nc-upd", "nc-upd", "global", 50)
	task := nomad.NewTask("t", "mock_driver").SetConfig("run_for", "1h").
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))

	plan, _, err := c.Jobs().Plan(job, true, nil)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if plan.Diff == nil || plan.Diff.Type != "Added" || plan.Annotations.DesiredTGUpdates["g"].Place != 1 {
		t.Fatalf("plan of a new job: diff %+v, annotations %+v", plan.Diff, plan.Annotations)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	job.TaskGroups[0].Count = pointer(2)
	plan, _, err = c.Jobs().Plan(job, true, nil)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if plan.Diff.Type != "Edited" || plan.JobModifyIndex == 0 {
		t.Fatalf("plan of a count change: %+v", plan)
	}
	if _, _, err := c.Jobs().EnforceRegister(job, plan.JobModifyIndex, nil); err != nil {
		t.Fatalf("enforce register: %v", err)
	}
	versions, diffs, _, err := c.Jobs().Versions("nc-upd", true, nil)
	if err != nil || len(versions) != 2 || len(diffs) != 1 || *versions[0].Version != 1 {
		t.Fatalf("versions: %d, diffs %d, %v", len(versions), len(diffs), err)
	}
	if _, _, err := c.Jobs().Revert("nc-upd", 0, pointer(uint64(1)), nil, "", ""); err != nil {
		t.Fatalf("revert: %v", err)
	}
	waitFor(t, 30*time.Second, "the reverted version", func() (bool, string) {
		j, _, err := c.Jobs().Info("nc-upd", nil)
		if err != nil {
			return false, err.Error()
		}
		return *j.Version == 2 && *j.TaskGroups[0].Count == 1, "not yet"
	})
	if _, _, err := c.Jobs().LatestDeployment("nc-upd", nil); err != nil {
		t.Fatalf("latest deployment: %v", err)
	}
	if _, _, err := c.Deployments().List(nil); err != nil {
		t.Fatalf("deployments: %v", err)
	}
}
