package taskrunner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/drover-io/drover/structs"
)

// RestartLeaser takes and gives back the servers' template restart
// leases (server/restart_lease.go): a group restarts at most its
// update.max_parallel allocations at a time after a template re-render.
// The Client implements it over RPC.
type RestartLeaser interface {
	// AcquireRestartLease asks for allocID's lease.
	AcquireRestartLease(ctx context.Context, allocID string) (*structs.AllocRestartLeaseResponse, error)
	// ReleaseRestartLease gives allocID's lease back.
	ReleaseRestartLease(ctx context.Context, allocID string) error
}

// leaseReleaseTimeout bounds giving a lease back (the lease expires on
// its own anyway).
const leaseReleaseTimeout = 2 * time.Second

// restartLeased restarts the task after a template re-render (reason)
// holding the group's restart lease: it waits for a lease (a Template
// event says so when it must), restarts the task, waits for it to run again for the
// group's min_healthy_time, and gives the lease back. Without a leaser,
// or for a group that needs no lease, it just restarts. When the servers
// cannot be asked, it restarts anyway: the task must pick up what was
// rendered, and a lost lease only costs the rollout its pacing.
func (h *templateHook) restartLeased(ctx context.Context, reason string) {
	leases := h.cfg.leaser()
	alloc, _ := h.task.allocAndTask()
	if leases == nil || alloc == nil {
		h.restart(ctx, reason)
		return
	}
	lease, err := h.acquireLease(ctx, leases, alloc.ID)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		h.logger.Warn("template change: restarting without a restart lease", "error", err)
		h.restart(ctx, reason)
		return
	case lease.TTL <= 0: // the group needs none
		h.restart(ctx, reason)
		return
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), leaseReleaseTimeout)
		defer cancel()
		if err := leases.ReleaseRestartLease(rctx, alloc.ID); err != nil {
			h.logger.Debug("template change: restart lease not given back (it expires)", "error", err)
		}
	}()
	before := h.task.TaskState().Restarts
	if !h.restart(ctx, reason) {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, lease.TTL)
	defer cancel()
	if err := h.task.waitRestarted(wctx, before); err != nil {
		return
	}
	if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil && tg.Update != nil && tg.Update.MinHealthyTime > 0 {
		sleepCtx(wctx, tg.Update.MinHealthyTime)
	}
}

// restart restarts the task for reason (a Restart Signaled event made
// now, once its turn came) and reports whether it did.
func (h *templateHook) restart(ctx context.Context, reason string) bool {
	ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason(reason)
	if err := h.task.Restart(ctx, ev); err != nil {
		h.logger.Debug("template change: no restart", "error", err)
		return false
	}
	return true
}

// acquireLease asks for the allocation's restart lease until it is
// granted, ctx ends or the servers answer an error. The first refusal is
// a Template event.
func (h *templateHook) acquireLease(ctx context.Context, leases RestartLeaser, allocID string) (*structs.AllocRestartLeaseResponse, error) {
	told := false
	for {
		resp, err := leases.AcquireRestartLease(ctx, allocID)
		if err != nil {
			return nil, err
		}
		if resp.Granted {
			return resp, nil
		}
		if !told {
			told = true
			h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage(fmt.Sprintf(
				"Template re-rendered: restart waits for its turn (%d of max_parallel %d allocations of the group restarting)", resp.Holders, resp.Limit)))
		}
		retry := max(resp.RetryIn, 100*time.Millisecond)
		// Jitter, so that the waiting clients do not all ask at once.
		if !sleepCtx(ctx, retry+rand.N(retry/2+1)) {
			return nil, ctx.Err()
		}
	}
}

// sleepCtx waits d or until ctx ends, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// leaser returns the configured RestartLeaser, nil when none.
func (c *TemplateConfig) leaser() RestartLeaser {
	if c == nil {
		return nil
	}
	return c.RestartLeases
}

// waitRestarted waits until the task runs again after more than
// restarts restarts; an error when the task is dead or ctx ends first.
func (tr *TaskRunner) waitRestarted(ctx context.Context, restarts uint64) error {
	for {
		tr.mu.RLock()
		st, changed := tr.state, tr.stateChanged
		tr.mu.RUnlock()
		switch {
		case st.Restarts > restarts && st.State == structs.TaskStateRunning:
			return nil
		case st.State == structs.TaskStateDead:
			return structs.NewError(structs.KindConflict, "task %q is dead", tr.taskName)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
