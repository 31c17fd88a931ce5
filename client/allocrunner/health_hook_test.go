package allocrunner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func deploymentAlloc(config map[string]any) *structs.Allocation {
	a := testAlloc(structs.JobTypeService, mockTask("web", config))
	a.DeploymentID = "d1"
	a.Job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	return a
}

// newHealthRunner returns a runner of alloc on the real clock: run in a
// synctest bubble, that is the bubble's fake time.
func newHealthRunner(t *testing.T, alloc *structs.Allocation, rec StateUpdater) *AllocRunner {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	ar, err := New(&Config{
		Alloc: alloc, AllocDirRoot: t.TempDir(), StateDB: state.NewMemDB(),
		Drivers:      func(string) (drivers.DriverPlugin, error) { return driver, nil },
		StateUpdater: rec, Node: &structs.Node{ID: "node1"}, KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ar.Destroy)
	return ar
}

// settle waits until every other goroutine of the test's synctest bubble
// is blocked (the runner has done all it can before time moves on), then
// fails the test unless cond holds.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("not %s once the runner is idle", what)
	}
}

func isRunning(ar *AllocRunner) func() bool {
	return func() bool { return ar.AllocState().ClientStatus == structs.AllocClientStatusRunning }
}

// TestHealthHookReportsHealthy: the verdict is healthy exactly when the
// task has run for min_healthy_time, stamped with that time, and sent.
func TestHealthHookReportsHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		ar := newHealthRunner(t, deploymentAlloc(nil), rec)
		go ar.Run()
		settle(t, "running", isRunning(ar))
		healthyAt := ar.AllocState().TaskStates["web"].StartedAt.Add(10 * time.Second)
		time.Sleep(time.Until(healthyAt) - time.Nanosecond)
		settle(t, "undecided just before min_healthy_time", func() bool { return ar.AllocState().DeploymentStatus == nil })
		time.Sleep(time.Nanosecond)
		settle(t, "healthy", func() bool { return ar.AllocState().DeploymentStatus.IsHealthy() })
		if ts := ar.AllocState().DeploymentStatus.Timestamp; !ts.Equal(healthyAt) {
			t.Errorf("timestamp = %v, want %v", ts, healthyAt)
		}
		if u := rec.last(); u == nil || !u.DeploymentStatus.IsHealthy() {
			t.Errorf("last update sent = %+v, want the healthy verdict", u)
		}
	})
}

func TestHealthHookReportsUnhealthy(t *testing.T) {
	cases := []struct {
		name   string
		config map[string]any
	}{
		{"task fails", map[string]any{"run_for": "5ms", "exit_code": 1}},
		{"deadline passes", map[string]any{"start_block_for": "1h"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ar := newHealthRunner(t, deploymentAlloc(tc.config), &recorder{})
				go ar.Run()
				synctest.Wait()
				if ds := ar.AllocState().DeploymentStatus; ds != nil {
					t.Fatalf("decided at once: %+v", ds)
				}
				time.Sleep(time.Minute) // the healthy_deadline
				settle(t, "unhealthy", func() bool { return ar.AllocState().DeploymentStatus.IsUnhealthy() })
			})
		})
	}
}

// TestHealthHookNotInDeployment: outside a deployment only a service
// job's allocations are tracked (by their migrate block,
// health_migrate_test.go); a batch job's are not.
func TestHealthHookNotInDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := deploymentAlloc(nil)
		a.DeploymentID = ""
		a.Job.Type = structs.JobTypeBatch
		ar := newHealthRunner(t, a, &recorder{})
		go ar.Run()
		settle(t, "running", isRunning(ar))
		time.Sleep(time.Hour)
		settle(t, "untracked", func() bool { return ar.AllocState().DeploymentStatus == nil })
	})
}
