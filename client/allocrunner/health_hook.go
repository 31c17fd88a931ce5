package allocrunner

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

var (
	_ prerunHook   = (*healthHook)(nil)
	_ updateHook   = (*healthHook)(nil)
	_ postrunHook  = (*healthHook)(nil)
	_ destroyHook  = (*healthHook)(nil)
	_ shutdownHook = (*healthHook)(nil)
)

// healthHook tracks the health of an allocation that is part of a
// deployment (DeploymentID set) whose group has an update strategy, or,
// outside a deployment, of a service job's allocation with its group's
// migrate block (the verdict a node drain waits for before it migrates
// more of the group; healthStrategy), and records the verdict in the runner's state (AllocState's
// DeploymentStatus), which the Client sends to the servers, and persists
// it: a runner restored after an agent restart keeps a verdict decided for
// the alloc's deployment instead of deciding again. It watches
// the task states through the runner's alloc broadcaster, in one
// goroutine it owns, started by Prerun (or an Update into a new
// deployment) and stopped by Postrun, Destroy and Shutdown.
type healthHook struct {
	ar    *AllocRunner
	clock Clock

	mu         sync.Mutex // guards the fields below
	deployment string     // the deployment being tracked
	cancel     context.CancelFunc
	done       chan struct{}
}

func newHealthHook(ar *AllocRunner, clock Clock) *healthHook {
	return &healthHook{ar: ar, clock: clock}
}

// Name returns "alloc_health".
func (*healthHook) Name() string { return "alloc_health" }

// Prerun starts tracking when the allocation is in a deployment.
func (h *healthHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	h.restart(req.Alloc)
	return nil
}

// Update restarts tracking when the allocation moved to another deployment.
func (h *healthHook) Update(ctx context.Context, req *UpdateRequest, resp *UpdateResponse) error {
	h.mu.Lock()
	same := h.deployment == req.Alloc.DeploymentID
	h.mu.Unlock()
	if !same {
		h.restart(req.Alloc)
	}
	return nil
}

// Postrun stops tracking.
func (h *healthHook) Postrun(context.Context, *PostrunRequest, *PostrunResponse) error {
	h.stop()
	return nil
}

// Destroy stops tracking.
func (h *healthHook) Destroy(context.Context, *DestroyRequest, *DestroyResponse) error {
	h.stop()
	return nil
}

// Shutdown stops tracking.
func (h *healthHook) Shutdown(context.Context, *ShutdownRequest, *ShutdownResponse) error {
	h.stop()
	return nil
}

// updateStrategy returns the group's update strategy, or the job's.
func updateStrategy(alloc *structs.Allocation) (*structs.TaskGroup, *structs.UpdateStrategy) {
	if alloc.Job == nil {
		return nil, nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, nil
	}
	if tg.Update != nil {
		return tg, tg.Update
	}
	return tg, alloc.Job.Update
}

// healthStrategy returns the group of alloc and the settings its health
// is judged with: in a deployment, the update strategy; outside one, for
// an allocation of a service job, the group's migrate block (a
// replacement placed by a drain, or any other: the drainer counts the
// group's healthy allocations before it migrates more of them, as
// Nomad's does). Nil when its health is not tracked.
func healthStrategy(alloc *structs.Allocation) (*structs.TaskGroup, *structs.UpdateStrategy) {
	if alloc.DeploymentID != "" {
		return updateStrategy(alloc)
	}
	if alloc.Job == nil || alloc.Job.Type != structs.JobTypeService {
		return nil, nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, nil
	}
	m := tg.Migrate
	if m == nil {
		m = structs.DefaultMigrateStrategy()
	}
	check := structs.UpdateStrategyHealthCheckChecks
	if m.HealthCheck == structs.MigrateHealthCheckTaskStates {
		check = structs.UpdateStrategyHealthCheckTaskStates
	}
	return tg, &structs.UpdateStrategy{HealthCheck: check, MinHealthyTime: m.MinHealthyTime, HealthyDeadline: m.HealthyDeadline}
}

// restart stops any tracking and starts tracking alloc's deployment. A
// verdict already decided for that deployment (restored after an agent
// restart: the server may have acted on it) is kept, not decided again;
// a verdict for another deployment is dropped.
func (h *healthHook) restart(alloc *structs.Allocation) {
	h.stop()
	if id, verdict := h.ar.decidedVerdict(); verdict != nil && id == alloc.DeploymentID {
		h.ar.logger.Info("keeping the restored deployment health verdict",
			"deployment_id", id, "healthy", verdict.IsHealthy())
		h.mu.Lock()
		h.deployment = id
		h.mu.Unlock()
		return
	}
	if h.ar.hasDeploymentStatus() {
		h.ar.setDeploymentStatus("", nil)
	}
	tg, u := healthStrategy(alloc)
	tracker := newHealthTracker(tg, u, h.clock.Now())
	if tracker == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.mu.Lock()
	h.deployment, h.cancel, h.done = alloc.DeploymentID, cancel, done
	h.mu.Unlock()
	go func() {
		defer close(done)
		h.track(ctx, tracker, alloc)
	}()
}

// stop stops the tracking goroutine, if any, and waits for it.
func (h *healthHook) stop() {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.cancel, h.done, h.deployment = nil, nil, ""
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// track checks the health on every published version of the allocation
// and when the tracker asks, until it decides or ctx is done.
func (h *healthHook) track(ctx context.Context, t *healthTracker, alloc *structs.Allocation) {
	l := h.ar.Listen()
	defer l.Close()
	states := h.ar.AllocState().TaskStates
	t.setBefore(states)
	logger := h.ar.logger.With("deployment_id", alloc.DeploymentID)
	for {
		decided, next := h.decide(t, alloc, states, logger)
		if decided {
			return
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = h.clock.After(next.Sub(h.clock.Now()))
		}
		select {
		case <-ctx.Done():
			// Postrun stops the tracking right after the runner
			// published its final state (a task that failed): take in
			// what was published before the stop, or the verdict
			// would depend on which of the two this goroutine saw
			// first.
			select {
			case a, ok := <-l.Ch():
				if ok {
					h.decide(t, alloc, a.TaskStates, logger)
				}
			default:
			}
			return
		case a, ok := <-l.Ch():
			if !ok {
				return
			}
			states = a.TaskStates
		case <-timer:
		}
	}
}

// decide checks the health at the clock's now and records a verdict once
// there is one (true); while pending, it returns when to check again.
func (h *healthHook) decide(t *healthTracker, alloc *structs.Allocation, states map[string]*structs.TaskState, logger *slog.Logger) (bool, time.Time) {
	var cs checkStatus
	cs.passing, cs.since = h.ar.services.checksPassing()
	verdict, next := t.checkWith(h.clock.Now(), states, cs)
	if verdict == healthPending {
		return false, next
	}
	healthy := verdict == healthHealthy
	canary := alloc.DeploymentStatus != nil && alloc.DeploymentStatus.Canary
	if alloc.DeploymentID == "" {
		logger.Info("alloc health decided for migrations (the group's migrate block)", "healthy", healthy)
	} else {
		logger.Info("alloc deployment health decided", "healthy", healthy)
	}
	h.ar.setDeploymentStatus(alloc.DeploymentID, &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: h.clock.Now(), Canary: canary})
	return true, time.Time{}
}
