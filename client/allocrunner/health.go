package allocrunner

import (
	"time"

	"github.com/drover-io/drover/structs"
)

// healthTracker decides an allocation's deployment health from its task
// states: healthy once every tracked task has run for minHealthy without a
// restart; unhealthy when a task fails, restarts or dies, or when the
// deadline passes first. It is pure: the caller feeds it the time.
type healthTracker struct {
	start      time.Time
	minHealthy time.Duration
	deadline   time.Duration // 0: none
	// tracked are the tasks that must be running: main tasks and sidecars.
	tracked []string
	// finite are prestart and poststart tasks that run to completion: they
	// only count when they fail.
	finite []string
	// useChecks: the group's service checks must pass too (checkWith).
	useChecks bool
	// before is what the tasks had done when tracking started (setBefore):
	// an allocation updated in place into a new deployment is judged on
	// what happens from then on.
	before map[string]taskBefore
}

// taskBefore is a task's restarts and start time when tracking started.
type taskBefore struct {
	restarts uint64
	started  time.Time
}

// setBefore records the task states at the start of tracking. A task
// already running then (an allocation updated in place, or restored
// after an agent restart) must stay up for minHealthy from the start of
// tracking, and only its restarts since count against it.
func (t *healthTracker) setBefore(states map[string]*structs.TaskState) {
	t.before = make(map[string]taskBefore, len(states))
	for name, st := range states {
		if st != nil {
			t.before[name] = taskBefore{restarts: st.Restarts, started: st.StartedAt}
		}
	}
}

// healthVerdict is the outcome of one check.
type healthVerdict int

const (
	healthPending healthVerdict = iota
	healthHealthy
	healthUnhealthy
)

// newHealthTracker returns a tracker for the group's tasks and update
// strategy, started at start; nil when the strategy asks for no tracking.
func newHealthTracker(tg *structs.TaskGroup, u *structs.UpdateStrategy, start time.Time) *healthTracker {
	if tg == nil || u == nil || u.HealthCheck == structs.UpdateStrategyHealthCheckManual {
		return nil
	}
	t := &healthTracker{start: start, minHealthy: u.MinHealthyTime, deadline: u.HealthyDeadline,
		useChecks: u.HealthCheck == structs.UpdateStrategyHealthCheckChecks && tg.HasChecks()}
	for _, task := range tg.Tasks {
		switch {
		case task.IsPoststop():
		case task.IsMain(), task.IsSidecar():
			t.tracked = append(t.tracked, task.Name)
		default:
			t.finite = append(t.finite, task.Name)
		}
	}
	return t
}

// check returns the verdict at now and, while pending, when to check
// again if no task changes meanwhile (zero: only on a task change).
func (t *healthTracker) check(now time.Time, states map[string]*structs.TaskState) (healthVerdict, time.Time) {
	for _, name := range t.finite {
		if st := states[name]; st != nil && st.Failed {
			return healthUnhealthy, time.Time{}
		}
	}
	var deadlineAt time.Time
	if t.deadline > 0 {
		deadlineAt = t.start.Add(t.deadline)
		if !now.Before(deadlineAt) {
			return healthUnhealthy, time.Time{}
		}
	}
	allRunning := len(t.tracked) > 0
	var since time.Time
	for _, name := range t.tracked {
		st := states[name]
		if st == nil {
			allRunning = false
			continue
		}
		b := t.before[name]
		if st.Failed || st.Restarts > b.restarts || st.State == structs.TaskStateDead {
			return healthUnhealthy, time.Time{}
		}
		if st.State != structs.TaskStateRunning || st.StartedAt.IsZero() {
			allRunning = false
			continue
		}
		started := st.StartedAt
		if !b.started.IsZero() && started.Equal(b.started) {
			started = t.start // running before tracking began
		}
		if started.After(since) {
			since = started
		}
	}
	if !allRunning {
		return healthPending, deadlineAt
	}
	healthyAt := since.Add(t.minHealthy)
	if !now.Before(healthyAt) {
		return healthHealthy, time.Time{}
	}
	if !deadlineAt.IsZero() && deadlineAt.Before(healthyAt) {
		return healthPending, deadlineAt
	}
	return healthPending, healthyAt
}

// checkStatus is what an allocation's service checks say: whether they
// all pass, and since when.
type checkStatus struct {
	passing bool
	since   time.Time
}

// checkWith is check for a group whose health also needs its checks
// (health_check "checks" with Nomad service checks): healthy once the
// tasks are and the checks have all passed for minHealthy. It is pure.
func (t *healthTracker) checkWith(now time.Time, states map[string]*structs.TaskState, cs checkStatus) (healthVerdict, time.Time) {
	v, next := t.check(now, states)
	if !t.useChecks || v == healthUnhealthy {
		return v, next
	}
	var deadlineAt time.Time
	if t.deadline > 0 {
		deadlineAt = t.start.Add(t.deadline)
	}
	if !cs.passing {
		return healthPending, deadlineAt
	}
	passingSince := cs.since
	if passingSince.Before(t.start) {
		// Passing before tracking began (an in-place update that kept
		// the check): minHealthy counts from the start of tracking.
		passingSince = t.start
	}
	healthyAt := passingSince.Add(t.minHealthy)
	if v == healthHealthy && !now.Before(healthyAt) {
		return healthHealthy, time.Time{}
	}
	for _, at := range []time.Time{healthyAt, deadlineAt} {
		if !at.IsZero() && at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return healthPending, next
}
