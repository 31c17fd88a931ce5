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

// TestDecideDrainChecks: with migrate health_check "checks" (the
// default) a replacement counts as healthy only on the client's verdict
// (its service checks passing for min_healthy_time), however long its
// tasks have run; "task_states" needs no verdict.
func TestDecideDrainChecks(t *testing.T) {
	now := time.Unix(10000, 0)
	yes, no := true, false
	job := func(check string) *structs.Job {
		return &structs.Job{ID: "web", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
			Name: "g", Count: 3, Migrate: &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: check, MinHealthyTime: 10 * time.Second},
		}}}
	}
	// alloc is a running allocation up for an hour, with the client's
	// verdict (nil: none yet).
	alloc := func(id string, j *structs.Job, node string, verdict *bool) *structs.Allocation {
		a := &structs.Allocation{
			ID: id, Name: fmt.Sprintf("web.g[%s]", id), JobID: j.ID, Job: j, TaskGroup: "g", NodeID: node,
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning, StartedAt: now.Add(-time.Hour)}},
		}
		if verdict != nil {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: verdict}
		}
		return a
	}
	// allocs: a migrated (stopped) from n1, its replacement a2 on n2
	// with replacement's verdict, b and c still on n1 (healthy).
	allocs := func(check string, replacement *bool) []*structs.Allocation {
		j := job(check)
		a := alloc("a", j, "n1", &yes)
		a.DesiredStatus = structs.AllocDesiredStatusStop
		a.DesiredTransition.Migrate = &yes
		return []*structs.Allocation{a, alloc("b", j, "n1", &yes), alloc("c", j, "n1", &yes), alloc("a2", j, "n2", replacement)}
	}
	for _, tc := range []struct {
		name    string
		allocs  []*structs.Allocation
		migrate []string
	}{
		{"checks, no verdict yet (a failing check): nothing more goes", allocs(structs.MigrateHealthCheckChecks, nil), nil},
		{"checks, unhealthy verdict: nothing more goes", allocs(structs.MigrateHealthCheckChecks, &no), nil},
		{"checks, healthy verdict (a passing check): the next goes", allocs(structs.MigrateHealthCheckChecks, &yes), []string{"b"}},
		{"unset is checks", allocs("", nil), nil},
		{"task_states, no verdict: the task states decide", allocs(structs.MigrateHealthCheckTaskStates, nil), []string{"b"}},
		{"task_states, unhealthy verdict: the verdict decides", allocs(structs.MigrateHealthCheckTaskStates, &no), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &fakeDrainView{jobs: map[string]*structs.Job{}, allocs: tc.allocs}
			var onNode []*structs.Allocation
			for _, a := range tc.allocs {
				v.jobs[a.JobID] = a.Job
				if a.NodeID == "n1" {
					onNode = append(onNode, a)
				}
			}
			node := &structs.Node{ID: "n1", Drain: true, DrainStrategy: &structs.DrainStrategy{StartedAt: now.Add(-time.Minute)}}
			d := decideDrain(now, node, onNode, v)
			var got []string
			for _, a := range d.Migrate {
				got = append(got, a.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.migrate) {
				t.Errorf("migrate = %v, want %v", got, tc.migrate)
			}
			if !d.Next.IsZero() {
				t.Errorf("next = %v: a verdict, not time, decides", d.Next)
			}
		})
	}
}

// TestDrainWaitsForHealthyChecks drains a node running a count = 2
// service with migrate max_parallel = 1 and health_check "checks" while a
// fake client reports: the replacement running with its check failing
// (no verdict) holds the drain at one migration past min_healthy_time;
// its verdict healthy (the check passed long enough) lets the next go.
func TestDrainWaitsForHealthyChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("web", 2, 100, 100)
		job.Type = structs.JobTypeService
		job.TaskGroups[0].Migrate = &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: structs.MigrateHealthCheckChecks,
			MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		registerNode(t, s, testNode("n2", 4000, 4096))

		// report plays both clients: what the servers want running runs
		// (with the verdict healthy(a) says, nil for none yet), what
		// they stopped completes.
		report := func(healthy func(a *structs.Allocation) *bool) {
			t.Helper()
			for _, node := range []string{"n1", "n2"} {
				all, _ := s.State().AllocsByNode(nil, node)
				var updates []*structs.Allocation
				for _, a := range all {
					switch {
					case a.ServerTerminalStatus() && a.ClientStatus != structs.AllocClientStatusComplete:
						updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete,
							TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}})
					case !a.ServerTerminalStatus():
						u := &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
							TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning, StartedAt: clock.Now()}}}
						if a.ClientStatus == structs.AllocClientStatusRunning {
							u.TaskStates = a.TaskStates
						}
						if h := healthy(a); h != nil {
							u.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: h, Timestamp: clock.Now()}
						}
						updates = append(updates, u)
					}
				}
				if len(updates) == 0 {
					continue
				}
				if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: node, SecretID: "secret-" + node, Alloc: updates}); err != nil {
					t.Fatal(err)
				}
			}
		}
		yes := true
		onN1Healthy := func(a *structs.Allocation) *bool {
			if a.NodeID == "n1" {
				return &yes
			}
			return nil // n2's replacement: its check fails
		}
		report(onN1Healthy)
		clock.Step(time.Minute)

		if _, err := s.NodeUpdateDrain(ctx, &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: &structs.DrainStrategy{}}); err != nil {
			t.Fatal(err)
		}
		// onN2 returns n2's allocations the server has not stopped,
		// adding what it read to ws (nil: none) for waitState.
		onN2 := func(ws memdb.WatchSet) []*structs.Allocation {
			all, _ := s.State().AllocsByNode(ws, "n2")
			var out []*structs.Allocation
			for _, a := range all {
				if !a.ServerTerminalStatus() {
					out = append(out, a)
				}
			}
			return out
		}
		waitState(t, s, "the first replacement on n2", func(ws memdb.WatchSet) (bool, string) {
			n := len(onN2(ws))
			return n == 1, fmt.Sprintf("%d on n2", n)
		})
		report(onN1Healthy) // the replacement runs; its check fails
		for range 3 {
			clock.Step(20 * time.Second) // well past min_healthy_time
			synctest.Wait()
		}
		if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusStop)); n != 1 {
			t.Fatalf("%d allocations stopped while the replacement's check failed, want 1 (max_parallel)", n)
		}
		if n := len(onN2(nil)); n != 1 {
			t.Fatalf("%d replacements while the first's check failed, want 1", n)
		}

		report(func(*structs.Allocation) *bool { return &yes }) // the check passed for min_healthy_time
		waitState(t, s, "the second replacement on n2", func(ws memdb.WatchSet) (bool, string) {
			n := len(onN2(ws))
			return n == 2, fmt.Sprintf("%d on n2", n)
		})
	})
}
