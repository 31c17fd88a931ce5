package taskrunner

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// fakeLeases is a RestartLeaser with limit leases per group, as the
// servers keep them; every lease lasts ttl (none expire in these tests).
type fakeLeases struct {
	limit int
	ttl   time.Duration

	mu      sync.Mutex // guards the fields below
	holders map[string]bool
	asked   int
}

func (f *fakeLeases) AcquireRestartLease(_ context.Context, allocID string) (*structs.AllocRestartLeaseResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.limit == 0 {
		return &structs.AllocRestartLeaseResponse{Granted: true}, nil
	}
	if !f.holders[allocID] && len(f.holders) >= f.limit {
		return &structs.AllocRestartLeaseResponse{RetryIn: 2 * time.Second, Holders: len(f.holders), Limit: f.limit}, nil
	}
	f.holders[allocID] = true
	return &structs.AllocRestartLeaseResponse{Granted: true, TTL: f.ttl, Limit: f.limit}, nil
}

func (f *fakeLeases) ReleaseRestartLease(_ context.Context, allocID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.holders, allocID)
	return nil
}

// restartLog records, across fake tasks, when each restart began and
// when its task ran again.
type restartLog struct {
	mu      sync.Mutex // guards the fields below
	running int        // restarts under way: restarted, lease not yet given back
	most    int
	order   []string
}

// fakeRestartTask is a templateTask whose restart takes restartTook to
// run again.
type fakeRestartTask struct {
	alloc       *structs.Allocation
	restartTook time.Duration
	log         *restartLog

	mu       sync.Mutex // guards the fields below
	restarts uint64
	events   []string
}

func (f *fakeRestartTask) EmitEvent(ev *structs.TaskEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, ev.Message)
}

func (f *fakeRestartTask) Restart(context.Context, *structs.TaskEvent) error {
	f.log.mu.Lock()
	f.log.running++
	f.log.most = max(f.log.most, f.log.running)
	f.log.order = append(f.log.order, f.alloc.ID)
	f.log.mu.Unlock()
	return nil
}

func (f *fakeRestartTask) waitRestarted(ctx context.Context, restarts uint64) error {
	if !sleepCtx(ctx, f.restartTook) {
		return ctx.Err()
	}
	f.mu.Lock()
	f.restarts++
	f.mu.Unlock()
	return nil
}

func (f *fakeRestartTask) TaskState() *structs.TaskState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &structs.TaskState{State: structs.TaskStateRunning, Restarts: f.restarts}
}

func (f *fakeRestartTask) allocAndTask() (*structs.Allocation, *structs.Task) {
	return f.alloc, f.alloc.Job.TaskGroups[0].Tasks[0]
}
func (f *fakeRestartTask) RequestKill(*structs.TaskEvent)                   {}
func (f *fakeRestartTask) signalTask(context.Context, string, string) error { return nil }
func (f *fakeRestartTask) execTask(context.Context, []string, time.Duration) (*drivers.ExecTaskResult, error) {
	return nil, nil
}

// leaseTestAlloc is allocation i of a service job whose group has
// max_parallel and min_healthy_time.
func leaseTestAlloc(i, maxParallel int, minHealthy time.Duration) *structs.Allocation {
	job := &structs.Job{ID: "web", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: 3, Update: &structs.UpdateStrategy{MaxParallel: maxParallel, MinHealthyTime: minHealthy},
		Tasks: []*structs.Task{{Name: "app", Driver: "mock"}},
	}}}
	return &structs.Allocation{ID: structs.AllocName("web", "g", i), JobID: "web", TaskGroup: "g", Job: job}
}

// TestTemplateRestartsRollWithMaxParallel: three allocations of a group
// with max_parallel 1 whose template re-renders at the same moment restart
// one after the other, each waiting for the previous one to run again for
// min_healthy_time; with max_parallel 2, two go at once.
func TestTemplateRestartsRollWithMaxParallel(t *testing.T) {
	for _, maxParallel := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			leases := &fakeLeases{limit: maxParallel, ttl: time.Minute, holders: map[string]bool{}}
			log := &restartLog{}
			var tasks []*fakeRestartTask
			var wg sync.WaitGroup
			start := time.Now()
			for i := range 3 {
				task := &fakeRestartTask{alloc: leaseTestAlloc(i, maxParallel, 2*time.Second), restartTook: time.Second, log: log}
				tasks = append(tasks, task)
				h := &templateHook{cfg: &TemplateConfig{RestartLeases: &releaseTracker{fakeLeases: leases, log: log}}, task: task, logger: slog.New(slog.DiscardHandler)}
				wg.Go(func() { h.restartLeased(t.Context(), "template re-rendered") })
			}
			wg.Wait()
			if log.most != maxParallel || len(log.order) != 3 {
				t.Errorf("max_parallel %d: %d restarts under way at most, %d restarts; want %d at most, 3", maxParallel, log.most, len(log.order), maxParallel)
			}
			// Each batch takes its restart (1s) and min_healthy_time (2s),
			// plus the waiting ones' retry (2s to 3s).
			if took := time.Since(start); maxParallel == 1 && took < 9*time.Second {
				t.Errorf("max_parallel 1: the three restarts took %s, want them one after the other", took)
			}
			waited := 0
			for _, task := range tasks {
				if task.TaskState().Restarts != 1 {
					t.Errorf("alloc %s restarted %d times, want 1", task.alloc.ID, task.TaskState().Restarts)
				}
				if len(task.events) > 0 {
					waited++
				}
			}
			if waited != 3-maxParallel {
				t.Errorf("max_parallel %d: %d tasks told they wait for their turn, want %d", maxParallel, waited, 3-maxParallel)
			}
		})
	}
}

// releaseTracker counts a restart as over when its lease is given back.
type releaseTracker struct {
	*fakeLeases
	log *restartLog
}

func (r *releaseTracker) ReleaseRestartLease(ctx context.Context, allocID string) error {
	r.log.mu.Lock()
	r.log.running--
	r.log.mu.Unlock()
	return r.fakeLeases.ReleaseRestartLease(ctx, allocID)
}

// TestTemplateRestartWithoutLeaseNeeded: a group the servers need no lease
// for (no max_parallel), or servers that cannot be asked, restart at once.
func TestTemplateRestartWithoutLeaseNeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &restartLog{}
		leases := &fakeLeases{limit: 0, holders: map[string]bool{}}
		task := &fakeRestartTask{alloc: leaseTestAlloc(0, 0, time.Second), log: log}
		h := &templateHook{cfg: &TemplateConfig{RestartLeases: leases}, task: task, logger: slog.New(slog.DiscardHandler)}
		start := time.Now()
		h.restartLeased(t.Context(), "template re-rendered")
		if len(log.order) != 1 || time.Since(start) != 0 {
			t.Errorf("restarts %v after %s, want one at once", log.order, time.Since(start))
		}
		h = &templateHook{cfg: &TemplateConfig{RestartLeases: failingLeases{}}, task: task, logger: slog.New(slog.DiscardHandler)}
		h.restartLeased(t.Context(), "template re-rendered")
		if len(log.order) != 2 {
			t.Errorf("restarts %v with unreachable servers, want the restart anyway", log.order)
		}
	})
}

// failingLeases answers every call with an error (no server reachable).
type failingLeases struct{}

func (failingLeases) AcquireRestartLease(context.Context, string) (*structs.AllocRestartLeaseResponse, error) {
	return nil, structs.NewError(structs.KindUnavailable, "no servers")
}
func (failingLeases) ReleaseRestartLease(context.Context, string) error { return nil }
