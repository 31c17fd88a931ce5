package server

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// coreScheduler is Nomad's scheduler of its internal evaluations (garbage
// collection). Drover's collection runs without evaluations, so a worker
// never gets one of its type; it is accepted, and required, in a worker
// configuration as Nomad requires it.
const coreScheduler = "_core"

// workerPool is the server's scheduler workers, resized and re-aimed at
// run time (PUT /v1/agent/schedulers/config). Each worker has a context
// of its own: a worker removed finishes the evaluation it holds, then
// returns. The pool waits for its workers in stop.
type workerPool struct {
	server string
	// run runs one worker until ctx is done.
	run  func(ctx context.Context, status *workerStatus, schedulers []string)
	base context.Context // the server's: stops every worker
	now  func() time.Time

	wg sync.WaitGroup

	mu      sync.Mutex // guards the fields below
	workers []*poolWorker
	enabled []string
	next    int  // the number of the next worker started
	stopped bool // stop was called: start no worker
}

// poolWorker is one running worker.
type poolWorker struct {
	status *workerStatus
	cancel context.CancelFunc
}

// validateWorkerConfig checks a configuration as Nomad does: between 0
// and the number of CPUs workers, schedulers of known types, _core among
// them.
func validateWorkerConfig(c structs.SchedulerWorkerConfig) error {
	if c.NumSchedulers < 0 || c.NumSchedulers > runtime.NumCPU() {
		return structs.Invalid("Invalid request: num_schedulers %d must be between 0 and the server's %d CPUs", c.NumSchedulers, runtime.NumCPU())
	}
	if !slices.Contains(c.EnabledSchedulers, coreScheduler) {
		return structs.Invalid("Invalid request: enabled_schedulers %v must include %q", c.EnabledSchedulers, coreScheduler)
	}
	for _, typ := range c.EnabledSchedulers {
		if !slices.Contains(workerSchedulers, typ) {
			return structs.Invalid("Invalid request: %q is not a scheduler: use some of %v", typ, workerSchedulers)
		}
	}
	return nil
}

// resize starts or stops workers until there are n, running the given
// schedulers: every worker is restarted when the schedulers change.
// Stopped workers finish the evaluation they hold in the background.
func (p *workerPool) resize(n int, schedulers []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if !slices.Equal(schedulers, p.enabled) {
		for _, w := range p.workers {
			w.cancel()
		}
		p.workers = nil
		p.enabled = slices.Clone(schedulers)
	}
	for len(p.workers) > n {
		last := p.workers[len(p.workers)-1]
		last.cancel()
		p.workers = p.workers[:len(p.workers)-1]
	}
	for len(p.workers) < n {
		ctx, cancel := context.WithCancel(p.base)
		w := &poolWorker{status: newWorkerStatus(p.server, p.next, p.now()), cancel: cancel}
		p.next++
		p.workers = append(p.workers, w)
		enabled := p.enabled
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer cancel()
			p.run(ctx, w.status, enabled)
		}()
	}
}

// config returns the pool's configuration now.
func (p *workerPool) config() structs.SchedulerWorkerConfig {
	p.mu.Lock()
	defer p.mu.Unlock()
	return structs.SchedulerWorkerConfig{NumSchedulers: len(p.workers), EnabledSchedulers: slices.Clone(p.enabled)}
}

// statuses returns the running workers' status, in the order they were
// started.
func (p *workerPool) statuses() []*workerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*workerStatus, len(p.workers))
	for i, w := range p.workers {
		out[i] = w.status
	}
	return out
}

// stop stops every worker and waits for them; the pool starts none after.
// The workers keep their place in statuses (reported Stopped).
func (p *workerPool) stop() {
	p.mu.Lock()
	p.stopped = true
	for _, w := range p.workers {
		w.cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// SchedulerWorkerConfig returns the number of the server's scheduler
// workers and the schedulers they run (GET /v1/agent/schedulers/config).
func (s *Server) SchedulerWorkerConfig() structs.SchedulerWorkerConfig { return s.pool.config() }

// SetSchedulerWorkerConfig resizes the server's scheduler workers and sets
// the schedulers they run, at once and until the server restarts (PUT
// /v1/agent/schedulers/config); 0 workers stop this server's scheduling.
// A bad configuration is KindInvalid and changes nothing.
func (s *Server) SetSchedulerWorkerConfig(c structs.SchedulerWorkerConfig) (structs.SchedulerWorkerConfig, error) {
	if err := validateWorkerConfig(c); err != nil {
		return structs.SchedulerWorkerConfig{}, err
	}
	var enabled []string
	for _, typ := range c.EnabledSchedulers {
		if !slices.Contains(enabled, typ) {
			enabled = append(enabled, typ)
		}
	}
	s.pool.resize(c.NumSchedulers, enabled)
	s.logger.Info("scheduler workers configured", "num_schedulers", c.NumSchedulers, "enabled_schedulers", enabled)
	return s.pool.config(), nil
}

// workerName names a server's worker n.
func workerName(server string, n int) string { return fmt.Sprintf("%s/%d", server, n) }
