package allocrunner

import (
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

func TestHealthTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	running := func(started time.Duration) *structs.TaskState {
		return &structs.TaskState{State: structs.TaskStateRunning, StartedAt: at(started)}
	}
	pending := &structs.TaskState{State: structs.TaskStatePending}
	tg := &structs.TaskGroup{Tasks: []*structs.Task{
		{Name: "web"},
		{Name: "init", Lifecycle: &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}},
		{Name: "proxy", Lifecycle: &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}},
		{Name: "cleanup", Lifecycle: &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}},
	}}
	u := &structs.UpdateStrategy{MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	cases := []struct {
		name   string
		now    time.Duration
		states map[string]*structs.TaskState
		want   healthVerdict
		next   time.Time
	}{
		{"nothing started: wake at the deadline", 0, map[string]*structs.TaskState{"web": pending, "proxy": pending},
			healthPending, at(time.Minute)},
		{"one tracked task not running yet", 5 * time.Second, map[string]*structs.TaskState{"web": running(time.Second), "proxy": pending},
			healthPending, at(time.Minute)},
		{"all running, not long enough: wake when healthy", 5 * time.Second,
			map[string]*structs.TaskState{"web": running(time.Second), "proxy": running(2 * time.Second)},
			healthPending, at(12 * time.Second)},
		{"all running long enough: healthy", 12 * time.Second,
			map[string]*structs.TaskState{"web": running(time.Second), "proxy": running(2 * time.Second),
				"init": {State: structs.TaskStateDead}, "cleanup": pending},
			healthHealthy, time.Time{}},
		{"a tracked task restarted", 30 * time.Second,
			map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: at(time.Second), Restarts: 1}, "proxy": running(time.Second)},
			healthUnhealthy, time.Time{}},
		{"a tracked task failed", time.Second,
			map[string]*structs.TaskState{"web": {State: structs.TaskStateDead, Failed: true}, "proxy": running(time.Second)},
			healthUnhealthy, time.Time{}},
		{"a main task exited", 30 * time.Second,
			map[string]*structs.TaskState{"web": {State: structs.TaskStateDead}, "proxy": running(time.Second)},
			healthUnhealthy, time.Time{}},
		{"a prestart task failed", time.Second,
			map[string]*structs.TaskState{"init": {State: structs.TaskStateDead, Failed: true}, "web": pending},
			healthUnhealthy, time.Time{}},
		{"deadline passed", time.Minute, map[string]*structs.TaskState{"web": pending, "proxy": pending},
			healthUnhealthy, time.Time{}},
		{"deadline comes before min healthy time", 55 * time.Second,
			map[string]*structs.TaskState{"web": running(54 * time.Second), "proxy": running(54 * time.Second)},
			healthPending, at(time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newHealthTracker(tg, u, t0)
			got, next := tr.check(at(tc.now), tc.states)
			if got != tc.want || !next.Equal(tc.next) {
				t.Errorf("check = %v, next %v; want %v, next %v", got, next, tc.want, tc.next)
			}
		})
	}
}

func TestHealthTrackerNoTracking(t *testing.T) {
	tg := &structs.TaskGroup{Tasks: []*structs.Task{{Name: "web"}}}
	if newHealthTracker(tg, nil, time.Now()) != nil {
		t.Error("no update strategy: tracked")
	}
	if newHealthTracker(tg, &structs.UpdateStrategy{HealthCheck: structs.UpdateStrategyHealthCheckManual}, time.Now()) != nil {
		t.Error("manual health: tracked")
	}
	// No deadline: pending waits for task changes only.
	tr := newHealthTracker(tg, &structs.UpdateStrategy{MinHealthyTime: time.Second}, time.Now())
	if v, next := tr.check(time.Now(), map[string]*structs.TaskState{"web": {State: structs.TaskStatePending}}); v != healthPending || !next.IsZero() {
		t.Errorf("check = %v, %v", v, next)
	}
}

// TestHealthTrackerAfterInPlaceUpdate: an allocation updated in place into
// a new deployment is judged from the start of tracking: its tasks, which
// ran (and restarted) long before, must stay up min_healthy_time from
// then, only restarts since count, and checks that passed before the
// update pass for min_healthy_time from then too.
func TestHealthTrackerAfterInPlaceUpdate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tg := &structs.TaskGroup{Tasks: []*structs.Task{{Name: "web"}},
		Services: []*structs.Service{{Name: "web", Provider: structs.ServiceProviderNomad,
			Checks: []*structs.ServiceCheck{{Name: "alive", Type: structs.ServiceCheckTCP}}}}}
	u := &structs.UpdateStrategy{MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute, HealthCheck: structs.UpdateStrategyHealthCheckChecks}
	// The task started an hour before the update and restarted twice.
	before := map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: at(-time.Hour), Restarts: 2}}
	passingLongAgo := checkStatus{passing: true, since: at(-time.Hour)}
	cases := []struct {
		name   string
		now    time.Duration
		states map[string]*structs.TaskState
		checks checkStatus
		want   healthVerdict
		next   time.Time
	}{
		{"just updated: not healthy before min_healthy_time", 0, before, passingLongAgo, healthPending, at(10 * time.Second)},
		{"up min_healthy_time since the update", 10 * time.Second, before, passingLongAgo, healthHealthy, time.Time{}},
		{"the new check fails", 10 * time.Second, before, checkStatus{}, healthPending, at(time.Minute)},
		{"restarted since the update", 5 * time.Second,
			map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: at(4 * time.Second), Restarts: 3}},
			passingLongAgo, healthUnhealthy, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newHealthTracker(tg, u, t0)
			tr.setBefore(before)
			got, next := tr.checkWith(at(tc.now), tc.states, tc.checks)
			if got != tc.want || !next.Equal(tc.next) {
				t.Errorf("checkWith = %v, next %v; want %v, next %v", got, next, tc.want, tc.next)
			}
		})
	}
}
