package allocrunner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

var (
	_ prerunHook   = (*serviceHook)(nil)
	_ postrunHook  = (*serviceHook)(nil)
	_ destroyHook  = (*serviceHook)(nil)
	_ shutdownHook = (*serviceHook)(nil)
)

// Retry bounds of a registration that failed (servers unreachable).
const (
	serviceRetryMin = time.Second
	serviceRetryMax = 30 * time.Second
)

// ServiceRegistrar is how the service hook reaches the servers' service
// registrations; the Client implements it with its node's credentials.
type ServiceRegistrar interface {
	// UpsertServices registers instances (again: an unchanged one is
	// not written).
	UpsertServices(ctx context.Context, regs []*structs.ServiceRegistration) error
	// DeleteServices deletes instances of the node by ID.
	DeleteServices(ctx context.Context, namespace string, ids []string) error
	// DeleteAllocServices deletes every instance of an allocation.
	DeleteAllocServices(ctx context.Context, allocID string) error
	// AllocServices reads what the servers hold for an allocation.
	AllocServices(ctx context.Context, allocID string) ([]*structs.ServiceRegistration, error)
}

// serviceHook keeps the allocation's Nomad services registered while
// their tasks run and runs their checks. One goroutine it owns (started
// by Prerun, stopped by Postrun, Destroy and Shutdown) follows the task
// states through the runner's broadcaster: it registers a task's services
// once the task runs and deregisters them when it stops (the group's
// follow its main tasks), retrying with backoff while the servers cannot
// be reached, and starts one goroutine per check of a registered
// instance. After an agent restart the first sync reads what the servers
// hold for the allocation, so that nothing is registered twice and
// nothing stale stays. Postrun and Destroy deregister everything;
// Shutdown (tasks keep running) leaves the registrations. A server-sent
// version of the allocation whose services changed (an in-place update)
// is followed by the same goroutine, started by Update when the earlier
// version had no Nomad services.
type serviceHook struct {
	ar    *AllocRunner
	reg   ServiceRegistrar
	clock Clock
	node  *structs.Node

	mu     sync.Mutex // guards the fields below
	cancel context.CancelFunc
	done   chan struct{}
	// prerun is set by Prerun, ended by Postrun, Destroy and Shutdown:
	// Update starts the goroutine only between the two.
	prerun, ended bool
	results       map[string]*structs.CheckQueryResult
	// passingSince is when each passing check last turned passing.
	passingSince map[string]time.Time
}

func newServiceHook(ar *AllocRunner, reg ServiceRegistrar, clock Clock, node *structs.Node) *serviceHook {
	return &serviceHook{ar: ar, reg: reg, clock: clock, node: node, results: map[string]*structs.CheckQueryResult{}, passingSince: map[string]time.Time{}}
}

// Name returns "services".
func (*serviceHook) Name() string { return "services" }

// hasServices reports whether the allocation's group or tasks have Nomad
// services.
func hasServices(alloc *structs.Allocation) bool {
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return false
	}
	services := slices.Clone(tg.Services)
	for _, t := range tg.Tasks {
		services = append(services, t.Services...)
	}
	return slices.ContainsFunc(services, func(s *structs.Service) bool {
		return s != nil && s.Provider == structs.ServiceProviderNomad
	})
}

// Prerun starts following the tasks.
func (h *serviceHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prerun = true
	h.startLocked(req.Alloc)
	return nil
}

// Update follows an in-place update: a version that gains Nomad services
// starts the goroutine (one that had services already follows the new
// version through the runner's broadcaster).
func (h *serviceHook) Update(ctx context.Context, req *UpdateRequest, resp *UpdateResponse) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.prerun && !h.ended {
		h.startLocked(req.Alloc)
	}
	return nil
}

// startLocked starts the goroutine unless it runs or alloc has no Nomad
// services; h.mu is held.
func (h *serviceHook) startLocked(alloc *structs.Allocation) {
	if h.reg == nil || h.cancel != nil || !hasServices(alloc) {
		return
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.cancel, h.done = cancel, done
	go func() {
		defer close(done)
		h.run(runCtx)
	}()
}

// Postrun stops following and deregisters everything (the tasks are dead).
func (h *serviceHook) Postrun(ctx context.Context, req *PostrunRequest, resp *PostrunResponse) error {
	if h.stop() {
		return h.deregisterAll(ctx, req.Alloc.ID)
	}
	return nil
}

// Destroy stops following and deregisters everything.
func (h *serviceHook) Destroy(ctx context.Context, req *DestroyRequest, resp *DestroyResponse) error {
	if h.stop() {
		return h.deregisterAll(ctx, req.Alloc.ID)
	}
	return nil
}

// Shutdown stops following; the tasks, and so their registrations, stay.
func (h *serviceHook) Shutdown(context.Context, *ShutdownRequest, *ShutdownResponse) error {
	h.stop()
	return nil
}

// stop stops the goroutine, if any, and waits for it; it reports whether
// there was one.
func (h *serviceHook) stop() bool {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.cancel, h.done, h.ended = nil, nil, true
	h.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	<-done
	return true
}

// deregisterAll deletes the allocation's registrations, retrying until ctx
// is done. The servers delete them anyway once the allocation is
// terminal: this makes it happen at once.
func (h *serviceHook) deregisterAll(ctx context.Context, allocID string) error {
	delay := serviceRetryMin
	for {
		err := h.reg.DeleteAllocServices(ctx, allocID)
		if err == nil {
			return nil
		}
		h.ar.logger.Warn("deregistering services failed; will retry", "error", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("deregister services of alloc %s: %w", allocID, err)
		case <-h.clock.After(delay):
		}
		delay = min(2*delay, serviceRetryMax)
	}
}

// CheckResults returns the latest result of each check, by check ID.
func (h *serviceHook) CheckResults() map[string]*structs.CheckQueryResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]*structs.CheckQueryResult, len(h.results))
	for id, r := range h.results {
		out[id] = r.Copy()
	}
	return out
}

// inputs gathers what desiredServices decides from.
func (h *serviceHook) inputs() serviceInputs {
	alloc := h.ar.Alloc()
	in := serviceInputs{alloc: alloc, node: h.node, states: map[string]*structs.TaskState{}, envs: map[string]map[string]string{}}
	for name, tr := range h.ar.tasks {
		in.states[name] = tr.TaskState()
		if inv := tr.Invocation(); inv != nil {
			in.envs[name] = inv.Env
		}
	}
	h.ar.mu.RLock()
	in.stopping = h.ar.stopping || h.ar.destroyed
	h.ar.mu.RUnlock()
	in.stopping = in.stopping || alloc.ServerTerminalStatus()
	return in
}

// run keeps the registrations in line with the task states until ctx is
// done, then stops the checks.
func (h *serviceHook) run(ctx context.Context) {
	l := h.ar.Listen()
	defer l.Close()
	checks := &checkSet{hook: h, workers: map[string]*checkWorker{}}
	defer checks.stopAll()
	var synced map[string]*structs.ServiceRegistration // nil: not read from the servers yet
	delay := serviceRetryMin
	var retry <-chan time.Time
	for {
		if h.ar.isShuttingDown() {
			// The agent stops, the tasks go on: their registrations stay
			// as they are, for the next agent to take over.
			return
		}
		desired, errs := desiredServices(h.inputs())
		for _, err := range errs {
			h.ar.logger.Warn("service not registered", "error", err)
		}
		checks.sync(ctx, desired)
		var err error
		synced, err = h.sync(ctx, synced, desired)
		switch {
		case err == nil:
			retry, delay = nil, serviceRetryMin
		case ctx.Err() != nil:
			return
		default:
			h.ar.logger.Warn("registering services failed; will retry", "error", err, "retry_in", delay)
			retry = h.clock.After(delay)
			delay = min(2*delay, serviceRetryMax)
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-l.Ch():
			if !ok {
				return
			}
		case <-retry:
		}
	}
}

// sync registers the desired instances that the servers lack or hold
// otherwise and deregisters those no longer desired; it returns what the
// servers now hold as far as it knows.
func (h *serviceHook) sync(ctx context.Context, synced map[string]*structs.ServiceRegistration, desired map[string]*serviceInstance) (map[string]*structs.ServiceRegistration, error) {
	alloc := h.ar.Alloc()
	if synced == nil {
		held, err := h.reg.AllocServices(ctx, alloc.ID)
		if err != nil {
			return nil, fmt.Errorf("read registered services: %w", err)
		}
		synced = make(map[string]*structs.ServiceRegistration, len(held))
		for _, r := range held {
			synced[r.ID] = r
		}
	}
	var upserts []*structs.ServiceRegistration
	for id, inst := range desired {
		if !synced[id].Equal(inst.reg) {
			upserts = append(upserts, inst.reg)
		}
	}
	var deletes []string
	for id := range synced {
		if desired[id] == nil {
			deletes = append(deletes, id)
		}
	}
	slices.Sort(deletes)
	if len(deletes) > 0 {
		if err := h.reg.DeleteServices(ctx, alloc.Namespace, deletes); err != nil {
			return synced, fmt.Errorf("deregister %d services: %w", len(deletes), err)
		}
		for _, id := range deletes {
			delete(synced, id)
		}
		h.ar.logger.Info("services deregistered", "count", len(deletes))
	}
	if len(upserts) > 0 {
		if err := h.reg.UpsertServices(ctx, upserts); err != nil {
			return synced, fmt.Errorf("register %d services: %w", len(upserts), err)
		}
		for _, r := range upserts {
			synced[r.ID] = r
		}
		h.ar.logger.Info("services registered", "count", len(upserts))
	}
	return synced, nil
}

// forgetResult drops a check's result (its definition changed or is gone).
func (h *serviceHook) forgetResult(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.results, id)
	delete(h.passingSince, id)
}

// setResult records a check's result at now and reports whether its
// status changed.
func (h *serviceHook) setResult(r *structs.CheckQueryResult, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := h.results[r.ID]
	h.results[r.ID] = r
	changed := prev == nil || prev.Status != r.Status
	switch {
	case r.Status != structs.CheckResultSuccess:
		delete(h.passingSince, r.ID)
	case changed:
		h.passingSince[r.ID] = now
	}
	return changed
}

// checksPassing reports whether every healthiness check of the
// allocation's Nomad services has a result and it is a success, and since
// when they all pass (the latest result that made one pass); it is false
// when the group has no such check.
func (h *serviceHook) checksPassing() (bool, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, total := 0, expectedChecks(h.ar.Alloc())
	var since time.Time
	for _, r := range h.results {
		if r.Mode != structs.CheckModeHealthiness {
			continue
		}
		if r.Status != structs.CheckResultSuccess {
			return false, time.Time{}
		}
		n++
		if t := h.passingSince[r.ID]; t.After(since) {
			since = t
		}
	}
	return total > 0 && n >= total, since
}

// allocChecks returns the checks of the allocation's Nomad services, at
// group and task level.
func allocChecks(alloc *structs.Allocation) []*structs.ServiceCheck {
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil
	}
	services := slices.Clone(tg.Services)
	for _, t := range tg.Tasks {
		services = append(services, t.Services...)
	}
	var out []*structs.ServiceCheck
	for _, s := range services {
		if s == nil || s.Provider != structs.ServiceProviderNomad {
			continue
		}
		for _, ch := range s.Checks {
			if ch != nil {
				out = append(out, ch)
			}
		}
	}
	return out
}

// expectedChecks counts the healthiness checks of the allocation's Nomad
// services.
func expectedChecks(alloc *structs.Allocation) int {
	n := 0
	for _, ch := range allocChecks(alloc) {
		if checkMode(ch) == structs.CheckModeHealthiness {
			n++
		}
	}
	return n
}

// CheckResults returns the latest result of each check of the
// allocation's Nomad services, by check ID.
func (ar *AllocRunner) CheckResults() map[string]*structs.CheckQueryResult {
	return ar.services.CheckResults()
}

// onlyMainTask returns the name of the group's main task when it has
// exactly one: the task a group service's check restarts (and runs a
// script in) when it names none. "" otherwise.
func (ar *AllocRunner) onlyMainTask() string {
	name := ""
	for _, tn := range ar.taskOrder {
		if !ar.tasks[tn].Task().IsMain() {
			continue
		}
		if name != "" {
			return ""
		}
		name = tn
	}
	return name
}
