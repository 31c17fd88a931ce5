package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The periodic dispatcher (Nomad's). While a server leads, one goroutine
// launches the children of the active periodic jobs at their cron ticks.
// A launch is one raft entry that registers the child and moves the
// parent's launch record (state.TablePeriodicLaunch) to the tick, so a
// tick launches at most once across leader changes and restarts: before
// launching, the dispatcher skips a tick the record already reached.
//
// A launch missed while no leader ran (downtime, an election) is caught
// up once, as Nomad does: when leadership is established, a job whose next
// tick after its last launch has passed is launched immediately, once,
// however many ticks were missed; the schedule then goes on from now.
//
// prohibit_overlap skips a tick while a child of the job is not dead.

// periodicLauncher launches a periodic job's child for launch time at.
type periodicLauncher func(job *structs.Job, at time.Time) error

// periodicDispatcher is the leader's periodic launch loop; run owns it.
type periodicDispatcher struct {
	clock  Clock
	logger *slog.Logger
	state  func() *state.StateStore
	launch periodicLauncher
}

// periodicEntry is a tracked job's next tick.
type periodicEntry struct {
	modifyIndex uint64 // JobModifyIndex the tick was computed for
	next        time.Time
}

// run catches up the launches missed before it started, then launches at
// every tick until ctx is done.
func (d *periodicDispatcher) run(ctx context.Context) {
	d.catchUp()
	tracked := map[structs.NamespacedID]periodicEntry{}
	for ctx.Err() == nil {
		st := d.state()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		jobs, err := st.Jobs(ws)
		if err != nil {
			d.logger.Error("periodic dispatcher: read jobs", "error", err)
		}
		now := d.clock.Now()
		seen := make(map[structs.NamespacedID]bool, len(tracked))
		var earliest time.Time
		for _, job := range jobs {
			if !job.IsPeriodicActive() {
				continue
			}
			key := job.NamespacedID()
			seen[key] = true
			e, ok := tracked[key]
			if !ok || e.modifyIndex != job.JobModifyIndex {
				e = periodicEntry{modifyIndex: job.JobModifyIndex, next: job.Periodic.Next(now)}
			}
			if !e.next.IsZero() && !e.next.After(now) {
				d.launchTick(st, job, e.next)
				e.next = job.Periodic.Next(maxTime(now, e.next))
			}
			tracked[key] = e
			if !e.next.IsZero() && (earliest.IsZero() || e.next.Before(earliest)) {
				earliest = e.next
			}
		}
		for key := range tracked {
			if !seen[key] {
				delete(tracked, key)
			}
		}
		// Wait for the earliest tick or a change of the jobs.
		wctx, cancel := context.WithCancel(ctx)
		var timer Timer
		if !earliest.IsZero() {
			timer = d.clock.AfterFunc(earliest.Sub(now), cancel)
		}
		_ = ws.WatchCtx(wctx) // returns on a change, the tick or ctx
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// launchTick launches job's child for tick at, unless the launch record
// already reached it (another leader launched it) or prohibit_overlap
// holds it back.
func (d *periodicDispatcher) launchTick(st *state.StateStore, job *structs.Job, at time.Time) {
	log := d.logger.With("namespace", job.Namespace, "job_id", job.ID, "launch", at.UTC().Format(time.RFC3339))
	rec, err := st.PeriodicLaunchByID(nil, job.Namespace, job.ID)
	if err != nil {
		log.Error("periodic dispatcher: read launch record", "error", err)
		return
	}
	if rec != nil && !rec.Launch.Before(at) {
		log.Debug("periodic launch already made")
		return
	}
	if job.Periodic.ProhibitOverlap {
		running, err := childRunning(st, job)
		if err != nil {
			log.Error("periodic dispatcher: read children", "error", err)
			return
		}
		if running != "" {
			log.Info("periodic launch skipped: prohibit_overlap and a previous child is not dead", "child", running)
			return
		}
	}
	if err := d.launch(job, at); err != nil {
		log.Error("periodic launch failed", "error", err)
		return
	}
	log.Info("periodic job launched")
}

// childRunning returns the ID of a child of job that is not dead, or "".
func childRunning(st *state.StateStore, job *structs.Job) (string, error) {
	children, err := st.JobsByIDPrefix(nil, job.Namespace, job.ID+structs.PeriodicLaunchSuffix)
	if err != nil {
		return "", err
	}
	for _, c := range children {
		if c.ParentID == job.ID && c.Status != structs.JobStatusDead {
			return c.ID, nil
		}
	}
	return "", nil
}

// catchUp launches once, now, each active periodic job whose next tick
// after its last launch has passed (Nomad's behaviour on leader
// election).
func (d *periodicDispatcher) catchUp() {
	st := d.state()
	jobs, err := st.Jobs(nil)
	if err != nil {
		d.logger.Error("periodic dispatcher: read jobs", "error", err)
		return
	}
	now := d.clock.Now()
	for _, job := range jobs {
		if !job.IsPeriodicActive() {
			continue
		}
		rec, err := st.PeriodicLaunchByID(nil, job.Namespace, job.ID)
		if err != nil || rec == nil {
			continue
		}
		if next := job.Periodic.Next(rec.Launch); !next.IsZero() && next.Before(now) {
			d.logger.Info("periodic launch missed while no leader ran: launching once now",
				"namespace", job.Namespace, "job_id", job.ID, "missed", next.UTC().Format(time.RFC3339))
			d.launchTick(st, job, now)
		}
	}
}

// periodicRunner starts and stops the dispatcher with leadership.
type periodicRunner struct {
	mu     sync.Mutex // guards the fields below
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs d under ctx until stop; a running dispatcher is stopped
// first.
func (r *periodicRunner) start(ctx context.Context, d *periodicDispatcher) {
	r.stop()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.mu.Lock()
	r.cancel, r.done = cancel, done
	r.mu.Unlock()
	go func() {
		defer close(done)
		d.run(ctx)
	}()
}

// stop stops the dispatcher and waits for it.
func (r *periodicRunner) stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel, r.done = nil, nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// newPeriodicDispatcher returns the dispatcher of this server, launching
// through raft.
func (s *Server) newPeriodicDispatcher() *periodicDispatcher {
	return &periodicDispatcher{
		clock:  s.clock,
		logger: s.logger.With("component", "periodic"),
		state:  s.fsm.State,
		launch: func(job *structs.Job, at time.Time) error {
			_, err := s.launchPeriodic(job, at, "")
			return err
		},
	}
}
