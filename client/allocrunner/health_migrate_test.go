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

// migrateAlloc is a service allocation outside any deployment (what a
// drain places) whose task's service has a script check that exits
// checkExit, and whose group's migrate block judges health by
// healthCheck, with min_healthy_time 10s and healthy_deadline 1m.
func migrateAlloc(checkExit int, healthCheck string) *structs.Allocation {
	svc := &structs.Service{Name: "api", PortLabel: "http", Provider: structs.ServiceProviderNomad, Checks: []*structs.ServiceCheck{{
		Name: "script", Type: structs.ServiceCheckScript, Command: "/bin/check", Interval: time.Second, Timeout: time.Second,
	}}}
	alloc := servicesAlloc(nil, []*structs.Service{svc})
	web := alloc.Job.TaskGroups[0].Tasks[1]
	web.Config = mock.UntilStopped(map[string]any{"exec_command": map[string]any{"exit_code": checkExit, "stdout_string": "probe"}})
	alloc.Job.TaskGroups[0].Tasks = []*structs.Task{web}
	alloc.Job.TaskGroups[0].Migrate = &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: healthCheck,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	return alloc
}

// newMigrateRunner returns a runner of alloc with services (registered
// with a fake) on the real clock: the synctest bubble's fake time.
func newMigrateRunner(t *testing.T, alloc *structs.Allocation, rec StateUpdater) *AllocRunner {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	ar, err := New(&Config{
		Alloc: alloc, AllocDirRoot: t.TempDir(), StateDB: state.NewMemDB(),
		Drivers:      func(string) (drivers.DriverPlugin, error) { return driver, nil },
		StateUpdater: rec, Node: &structs.Node{ID: "node1", Datacenter: "dc1"},
		Services: newFakeRegistrar(), KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ar.Destroy)
	return ar
}

// TestHealthHookMigrateVerdict: an allocation outside a deployment gets a
// health verdict from its group's migrate block, sent to the servers
// (whose drainer waits for it): with health_check "checks" a failing
// check keeps it undecided until healthy_deadline makes it unhealthy, a
// passing one makes it healthy after min_healthy_time; "task_states"
// ignores the check.
func TestHealthHookMigrateVerdict(t *testing.T) {
	for _, tc := range []struct {
		name        string
		checkExit   int
		healthCheck string
		decideAt    time.Duration // after the task started
		healthy     bool
	}{
		{"checks: a passing check, healthy after min_healthy_time", 0, structs.MigrateHealthCheckChecks, 10 * time.Second, true},
		{"checks: a failing check, unhealthy at healthy_deadline", 2, structs.MigrateHealthCheckChecks, time.Minute, false},
		{"task_states: the failing check does not count", 2, structs.MigrateHealthCheckTaskStates, 10 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				ar := newMigrateRunner(t, migrateAlloc(tc.checkExit, tc.healthCheck), rec)
				go ar.Run()
				settle(t, "running", isRunning(ar))
				started := ar.AllocState().TaskStates["web"].StartedAt
				// The check passes (or fails) from its first run, at
				// once; time moves in whole check intervals.
				time.Sleep(time.Until(started.Add(tc.decideAt - time.Second)))
				settle(t, "undecided a check interval before the verdict", func() bool { return ar.AllocState().DeploymentStatus == nil })
				time.Sleep(2 * time.Second)
				settle(t, "decided", func() bool { return ar.AllocState().DeploymentStatus != nil })
				ds := ar.AllocState().DeploymentStatus
				if ds.IsHealthy() != tc.healthy {
					t.Fatalf("verdict %+v, want healthy = %v", ds, tc.healthy)
				}
				u := rec.last()
				if u == nil || u.DeploymentID != "" || u.DeploymentStatus == nil || u.DeploymentStatus.IsHealthy() != tc.healthy {
					t.Fatalf("last update sent = %+v, want the verdict outside a deployment", u)
				}
			})
		})
	}
}
