package allocrunner

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// checkSet runs one worker per check of each registered instance; only
// the hook's run goroutine touches it.
type checkSet struct {
	hook    *serviceHook
	workers map[string]*checkWorker // by check ID
}

// checkWorker is one check's goroutine.
type checkWorker struct {
	target *checkTarget
	cancel context.CancelFunc
	done   chan struct{}
}

// sync starts the workers of the desired instances' checks and stops the
// others (an instance whose address changed gets new ones).
func (cs *checkSet) sync(ctx context.Context, desired map[string]*serviceInstance) {
	want := map[string]*checkTarget{}
	for _, inst := range desired {
		for _, ch := range inst.service.Checks {
			if ch == nil {
				continue
			}
			t, err := cs.hook.target(inst, ch)
			if err != nil {
				cs.hook.ar.logger.Warn("check not run", "check", ch.Name, "error", err)
				continue
			}
			want[checkID(inst.reg.ID, ch)] = t
		}
	}
	var defined []*structs.ServiceCheck // the alloc version's checks, read when needed
	for id, w := range cs.workers {
		t := want[id]
		if t != nil && t.same(w.target) {
			continue
		}
		w.cancel()
		<-w.done
		delete(cs.workers, id)
		if t == nil && defined == nil {
			defined = allocChecks(cs.hook.ar.Alloc())
		}
		if resultStale(w.target, t, defined) {
			cs.hook.forgetResult(id)
		}
	}
	for id, t := range want {
		if cs.workers[id] != nil {
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w := &checkWorker{target: t, cancel: cancel, done: make(chan struct{})}
		cs.workers[id] = w
		go func() {
			defer close(w.done)
			cs.hook.runCheck(wctx, id, t)
		}()
	}
}

// resultStale reports whether the last result of a check whose worker
// (probing old) stops must be forgotten: its definition changed (want,
// non-nil, probes something else) or is gone from the alloc version's
// checks (defined), by an in-place update; its result says nothing of
// the new version. A check only stopped with its task keeps its result.
func resultStale(old, want *checkTarget, defined []*structs.ServiceCheck) bool {
	if want != nil {
		return true
	}
	return !slices.ContainsFunc(defined, func(c *structs.ServiceCheck) bool { return reflect.DeepEqual(c, old.check) })
}

// stopAll stops every worker and waits for them.
func (cs *checkSet) stopAll() {
	for id, w := range cs.workers {
		w.cancel()
		<-w.done
		delete(cs.workers, id)
	}
}

// target resolves what a check of an instance probes.
func (h *serviceHook) target(inst *serviceInstance, ch *structs.ServiceCheck) (*checkTarget, error) {
	task := ch.TaskName
	if task == "" {
		task = inst.task
	}
	if task == "" {
		task = h.ar.onlyMainTask()
	}
	t := &checkTarget{check: ch, service: inst.reg.ServiceName, task: task, env: maps.Clone(inst.env)}
	if ch.Type == structs.ServiceCheckScript {
		if task == "" {
			return nil, fmt.Errorf("a script check of a group service needs a task")
		}
		return t, nil
	}
	label := ch.PortLabel
	if label == "" {
		label = inst.service.PortLabel
	}
	addr, port, err := serviceAddress(h.ar.Alloc(), h.node, inst.task, interpolate(label, inst.env), ch.AddressMode)
	if err != nil {
		return nil, err
	}
	if ch.PortLabel == "" && inst.service.Address != "" {
		addr = inst.reg.Address
	}
	t.addr, t.port = addr, port
	return t, nil
}

// runCheck probes a check every interval until ctx is done, records its
// results, restarts its task per check_restart, and wakes the runner's
// listeners (deployment health) when its status changes.
func (h *serviceHook) runCheck(ctx context.Context, id string, t *checkTarget) {
	alloc := h.ar.Alloc()
	counter, restarter := newCheckCounter(t.check), newCheckRestarter(t.check)
	exec := func(ctx context.Context, task string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
		tr, ok := h.ar.tasks[task]
		if !ok {
			return nil, structs.NotFound("task", task)
		}
		return tr.Exec(ctx, cmd, timeout)
	}
	base := structs.CheckQueryResult{ID: id, Mode: checkMode(t.check), Group: alloc.TaskGroup, Task: t.task, Service: t.service, Check: t.check.Name}
	for {
		res := probe(ctx, t, exec)
		if ctx.Err() != nil {
			return
		}
		now := h.clock.Now()
		r := base
		r.Status, r.StatusCode, r.Output, r.Timestamp = counter.record(res.ok), res.statusCode, res.output, now.Unix()
		if h.setResult(&r, now) {
			taskNotifier{h.ar}.TaskStateUpdated() // the deployment health may change
		}
		if restarter != nil && t.task != "" {
			started := time.Time{}
			if tr, ok := h.ar.tasks[t.task]; ok {
				started = tr.TaskState().StartedAt
			}
			if restarter.observe(r.Status, now, started) {
				h.ar.logger.Info("restarting task: check unhealthy", "task", t.task, "check", t.check.Name)
				ev := structs.NewTaskEvent(structs.TaskRestartSignal).SetRestartReason(fmt.Sprintf("healthcheck: check %q unhealthy", t.check.Name))
				if err := h.ar.RestartTask(ctx, t.task, ev); err != nil {
					h.ar.logger.Warn("check restart failed", "task", t.task, "error", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-h.clock.After(t.check.Interval):
		}
	}
}
