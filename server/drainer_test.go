package server

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// fakeDrainView is a drainView over fixed jobs and allocations.
type fakeDrainView struct {
	jobs   map[string]*structs.Job
	allocs []*structs.Allocation
}

func (v *fakeDrainView) job(_, id string) *structs.Job { return v.jobs[id] }
func (v *fakeDrainView) jobAllocs(_, id string) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range v.allocs {
		if a.JobID == id {
			out = append(out, a)
		}
	}
	return out
}

func TestDecideDrain(t *testing.T) {
	now := time.Unix(10000, 0)
	yes := true
	svc := func(maxParallel, count int) *structs.Job {
		return &structs.Job{ID: "web", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
			Name: "g", Count: count, Migrate: &structs.MigrateStrategy{MaxParallel: maxParallel, HealthCheck: structs.MigrateHealthCheckTaskStates, MinHealthyTime: 10 * time.Second},
		}}}
	}
	batch := &structs.Job{ID: "batch", Type: structs.JobTypeBatch, TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1}}}
	sys := &structs.Job{ID: "sys", Type: structs.JobTypeSystem, TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1}}}
	// alloc is a running allocation of job on node whose tasks started
	// `up` before now.
	alloc := func(id string, job *structs.Job, node string, up time.Duration) *structs.Allocation {
		return &structs.Allocation{
			ID: id, Name: fmt.Sprintf("%s.g[%s]", job.ID, id), JobID: job.ID, Job: job, TaskGroup: "g", NodeID: node,
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning, StartedAt: now.Add(-up)}},
		}
	}
	marked := func(a *structs.Allocation) *structs.Allocation {
		a.DesiredTransition.Migrate = &yes
		return a
	}
	stopped := func(a *structs.Allocation) *structs.Allocation {
		a.DesiredStatus = structs.AllocDesiredStatusStop
		return a
	}
	drain := func(deadline time.Duration, ignoreSystem bool) *structs.DrainStrategy {
		d := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: deadline, IgnoreSystemJobs: ignoreSystem}, StartedAt: now.Add(-time.Minute)}
		if deadline > 0 {
			d.ForceDeadline = d.StartedAt.Add(deadline)
		}
		return d
	}
	for _, tc := range []struct {
		name    string
		drain   *structs.DrainStrategy
		allocs  []*structs.Allocation // all of them; those on "n1" drain
		migrate []string
		done    bool
		next    time.Time
	}{
		{
			name:  "max_parallel 1 of 3: one at a time",
			drain: drain(0, false),
			allocs: []*structs.Allocation{
				alloc("a", svc(1, 3), "n1", time.Hour), alloc("b", svc(1, 3), "n1", time.Hour), alloc("c", svc(1, 3), "n1", time.Hour),
			},
			migrate: []string{"a"},
		},
		{
			name:  "max_parallel 2 of 3: two at a time",
			drain: drain(0, false),
			allocs: []*structs.Allocation{
				alloc("a", svc(2, 3), "n1", time.Hour), alloc("b", svc(2, 3), "n1", time.Hour), alloc("c", svc(2, 3), "n1", time.Hour),
			},
			migrate: []string{"a", "b"},
		},
		{
			name:  "one migrating: wait for its replacement",
			drain: drain(0, false),
			allocs: []*structs.Allocation{
				marked(alloc("a", svc(1, 3), "n1", time.Hour)), alloc("b", svc(1, 3), "n1", time.Hour), alloc("c", svc(1, 3), "n1", time.Hour),
			},
		},
		{
			name:  "replacement not healthy for long enough yet",
			drain: drain(0, false),
			allocs: []*structs.Allocation{
				stopped(marked(alloc("a", svc(1, 3), "n1", time.Hour))), alloc("b", svc(1, 3), "n1", time.Hour), alloc("c", svc(1, 3), "n1", time.Hour),
				alloc("a2", svc(1, 3), "n2", 4*time.Second),
			},
			next: now.Add(6 * time.Second),
		},
		{
			name:  "replacement healthy: the next one goes",
			drain: drain(0, false),
			allocs: []*structs.Allocation{
				stopped(marked(alloc("a", svc(1, 3), "n1", time.Hour))), alloc("b", svc(1, 3), "n1", time.Hour), alloc("c", svc(1, 3), "n1", time.Hour),
				alloc("a2", svc(1, 3), "n2", 10*time.Second),
			},
			migrate: []string{"b"},
		},
		{
			name:  "batch waits, system waits for the others",
			drain: drain(time.Hour, false),
			allocs: []*structs.Allocation{
				alloc("b1", batch, "n1", time.Hour), alloc("s1", sys, "n1", time.Hour),
			},
			next: now.Add(-time.Minute + time.Hour),
		},
		{
			name:    "system goes last",
			drain:   drain(0, false),
			allocs:  []*structs.Allocation{stopped(alloc("a", svc(1, 1), "n1", time.Hour)), alloc("s1", sys, "n1", time.Hour)},
			migrate: []string{"s1"},
		},
		{
			name:   "system ignored: done",
			drain:  drain(0, true),
			allocs: []*structs.Allocation{alloc("s1", sys, "n1", time.Hour)},
			done:   true,
		},
		{
			name:  "deadline passed: everything goes at once",
			drain: drain(30*time.Second, false),
			allocs: []*structs.Allocation{
				alloc("a", svc(1, 3), "n1", time.Hour), alloc("b", svc(1, 3), "n1", time.Hour),
				alloc("b1", batch, "n1", time.Hour), alloc("s1", sys, "n1", time.Hour),
			},
			migrate: []string{"a", "b", "b1", "s1"},
		},
		{
			name:    "force (negative deadline)",
			drain:   drain(-1, false),
			allocs:  []*structs.Allocation{alloc("a", svc(1, 3), "n1", time.Hour), alloc("b", svc(1, 3), "n1", time.Hour)},
			migrate: []string{"a", "b"},
		},
		{
			name:   "nothing left: done",
			drain:  drain(0, false),
			allocs: []*structs.Allocation{stopped(alloc("a", svc(1, 3), "n1", time.Hour))},
			done:   true,
		},
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
			node := &structs.Node{ID: "n1", DrainStrategy: tc.drain, Drain: true}
			d := decideDrain(now, node, onNode, v)
			var got []string
			for _, a := range d.Migrate {
				got = append(got, a.ID)
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(tc.migrate) {
				t.Errorf("migrate = %v, want %v", got, tc.migrate)
			}
			if d.Done != tc.done {
				t.Errorf("done = %v, want %v", d.Done, tc.done)
			}
			if !d.Next.Equal(tc.next) {
				t.Errorf("next = %v, want %v", d.Next, tc.next)
			}
		})
	}
}

// TestDrainMigratesOneAtATime drains a node running a count = 3 service
// with migrate max_parallel = 1 while a fake client reports the
// allocations' states: never more than one migrates at a time, each
// replacement must be up for min_healthy_time (stepped on the fake clock)
// before the next goes, and the drain ends with the node ineligible.
func TestDrainMigratesOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		clock := &fakeClock{now: time.Unix(1000, 0)}
		s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
		registerNode(t, s, testNode("n1", 4000, 4096))
		job := testJob("web", 3, 100, 100)
		job.Type = structs.JobTypeService
		job.TaskGroups[0].Migrate = &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 10 * time.Second}
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		registerNode(t, s, testNode("n2", 4000, 4096))

		// report plays both clients: what the servers want running runs,
		// what they stopped completes.
		report := func() {
			t.Helper()
			for _, node := range []string{"n1", "n2"} {
				all, _ := s.State().AllocsByNode(nil, node)
				var updates []*structs.Allocation
				for _, a := range all {
					switch {
					case a.ServerTerminalStatus() && a.ClientStatus != structs.AllocClientStatusComplete:
						updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete,
							TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}})
					case !a.ServerTerminalStatus() && a.ClientStatus == structs.AllocClientStatusPending:
						updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
							TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning, StartedAt: clock.Now()}}})
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
		report()
		clock.Step(time.Minute) // the first three are healthy

		if _, err := s.NodeUpdateDrain(ctx, &structs.NodeUpdateDrainRequest{NodeID: "n1",
			DrainStrategy: &structs.DrainStrategy{}, Meta: map[string]string{"reason": "kernel"}}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.State().NodeByID(nil, "n1"); !n.Drain || n.SchedulingEligibility != structs.NodeSchedulingIneligible {
			t.Fatalf("draining node: drain %v, %s", n.Drain, n.SchedulingEligibility)
		}
		// n1 cannot be made eligible while it drains.
		if _, err := s.NodeUpdateEligibility(ctx, &structs.NodeUpdateEligibilityRequest{NodeID: "n1", Eligibility: "eligible"}); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("eligible while draining: %v", err)
		}
		for round := 1; round <= 3; round++ {
			waitState(t, s, fmt.Sprintf("round %d: a replacement on n2", round), func(ws memdb.WatchSet) (bool, string) {
				var migrating, onN2 int
				all, _ := s.State().AllocsByJob(ws, "default", "web")
				for _, a := range all {
					if a.DesiredTransition.ShouldMigrate() && a.ClientStatus != structs.AllocClientStatusComplete {
						migrating++
					}
					if a.NodeID == "n2" && !a.ServerTerminalStatus() {
						onN2++
					}
				}
				if migrating > 1 {
					t.Fatalf("round %d: %d allocations migrating at once", round, migrating)
				}
				return onN2 == round, fmt.Sprintf("%d on n2, %d migrating", onN2, migrating)
			})
			report()
			// The replacement is not healthy yet: nothing else moves.
			clock.Step(5 * time.Second)
			if n := len(allocsOf(t, s, "web", structs.AllocDesiredStatusStop)); n != round {
				t.Fatalf("round %d: %d stopped before the replacement was healthy", round, n)
			}
			clock.Step(5 * time.Second)
		}
		waitState(t, s, "drain complete", func(ws memdb.WatchSet) (bool, string) {
			n, _ := s.State().NodeByID(ws, "n1")
			return n.DrainStrategy == nil && !n.Drain, fmt.Sprintf("drain %+v", n.DrainStrategy)
		})
		n, _ := s.State().NodeByID(nil, "n1")
		if n.SchedulingEligibility != structs.NodeSchedulingIneligible || n.LastDrain == nil ||
			n.LastDrain.Status != structs.DrainStatusComplete || n.LastDrain.Meta["reason"] != "kernel" {
			t.Fatalf("after the drain: %s, last drain %+v", n.SchedulingEligibility, n.LastDrain)
		}
		// Made eligible again, with evaluations for its jobs.
		resp, err := s.NodeUpdateEligibility(ctx, &structs.NodeUpdateEligibilityRequest{NodeID: "n1", Eligibility: "eligible"})
		if err != nil || len(resp.EvalIDs) == 0 {
			t.Fatalf("eligible: %+v, %v", resp, err)
		}
	})
}
