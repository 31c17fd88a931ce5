package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// periodicHarness runs dispatchers over one state store, standing in for
// raft: its launcher writes the child and the launch record in one batch,
// as the FSM applies JobRegisterCommand.
type periodicHarness struct {
	t  *testing.T
	st *state.StateStore

	mu       sync.Mutex // guards the fields below
	index    uint64
	launched []string // child IDs, in launch order
}

func newPeriodicHarness(t *testing.T, job *structs.Job) *periodicHarness {
	t.Helper()
	st, err := state.NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	h := &periodicHarness{t: t, st: st, index: 1}
	job.Canonicalize()
	job.SubmitTime = time.Now().UnixNano()
	if err := st.Batch(1, func(w *state.WriteTxn) error {
		if err := w.UpsertJob(job); err != nil {
			return err
		}
		return w.EnsurePeriodicLaunch(job)
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *periodicHarness) launch(job *structs.Job, at time.Time) error {
	h.mu.Lock()
	h.index++
	index := h.index
	child := periodicChild(job, at)
	h.launched = append(h.launched, child.ID)
	h.mu.Unlock()
	return h.st.Batch(index, func(w *state.WriteTxn) error {
		if err := w.UpsertJob(child); err != nil {
			return err
		}
		return w.UpsertPeriodicLaunch(&structs.PeriodicLaunch{Namespace: job.Namespace, ID: job.ID, Launch: at})
	})
}

func (h *periodicHarness) launches() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.launched)
}

// start runs a dispatcher (one leader's) until the returned func stops it.
func (h *periodicHarness) start() (stop func()) { return h.startSkewed(0) }

// skewedClock is a server whose clock is behind by lag.
type skewedClock struct{ lag time.Duration }

func (c skewedClock) Now() time.Time { return time.Now().Add(-c.lag) }
func (c skewedClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

// startSkewed runs a dispatcher whose clock is lag behind.
func (h *periodicHarness) startSkewed(lag time.Duration) (stop func()) {
	var r periodicRunner
	r.start(context.Background(), &periodicDispatcher{
		clock: skewedClock{lag}, logger: slog.New(slog.DiscardHandler),
		state: func() *state.StateStore { return h.st }, launch: h.launch,
	})
	return r.stop
}

func periodicJob(id, cron string, overlap bool) *structs.Job {
	j := testJob(id, 1, 100, 100)
	j.Type = structs.JobTypeBatch
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: cron, ProhibitOverlap: overlap}
	return j
}

// unixAt is the child ID suffix of the bubble's start plus d (synctest
// starts its clock at 2000-01-01 00:00:00 UTC).
func childAt(job string, start time.Time, d time.Duration) string {
	return periodicChild(&structs.Job{ID: job}, start.Add(d)).ID
}

func TestPeriodicDispatcherLaunchesEachTickOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newPeriodicHarness(t, periodicJob("cron", "* * * * *", false))
		stop := h.start()
		defer stop()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := h.launches(); len(got) != 0 {
			t.Fatalf("launched before the first tick: %v", got)
		}
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		want := []string{childAt("cron", start, time.Minute), childAt("cron", start, 2*time.Minute), childAt("cron", start, 3*time.Minute)}
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("launches = %v, want %v", got, want)
		}
	})
}

func TestPeriodicDispatcherLeaderChangeDoesNotLaunchTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newPeriodicHarness(t, periodicJob("cron", "* * * * *", false))
		stopA := h.start()
		time.Sleep(time.Minute) // exactly the first tick: A launches it
		synctest.Wait()
		stopA()
		// B takes over at the same instant, with the same tick due.
		stopB := h.start()
		defer stopB()
		synctest.Wait()
		time.Sleep(time.Minute + 30*time.Second)
		synctest.Wait()
		want := []string{childAt("cron", start, time.Minute), childAt("cron", start, 2*time.Minute)}
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("launches = %v, want %v", got, want)
		}
	})
}

// TestPeriodicDispatcherLaggingLeaderSkipsLaunchedTick: a new leader whose
// clock is behind sees as due a tick the old leader launched; the launch
// record in the state makes it skip that tick.
func TestPeriodicDispatcherLaggingLeaderSkipsLaunchedTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newPeriodicHarness(t, periodicJob("cron", "* * * * *", false))
		stopA := h.start()
		time.Sleep(time.Minute)
		synctest.Wait()
		stopA()
		stopB := h.startSkewed(5 * time.Second) // B's clock reads 00:00:55
		defer stopB()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		want := []string{childAt("cron", start, time.Minute)}
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("launches = %v, want %v", got, want)
		}
	})
}

func TestPeriodicDispatcherCatchesUpOneMissedLaunch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newPeriodicHarness(t, periodicJob("cron", "* * * * *", false))
		// No leader for five and a half minutes: five ticks missed.
		time.Sleep(5*time.Minute + 30*time.Second)
		stop := h.start()
		defer stop()
		synctest.Wait()
		want := []string{childAt("cron", start, 5*time.Minute+30*time.Second)}
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("after the downtime: launches = %v, want one launch now: %v", got, want)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		want = append(want, childAt("cron", start, 6*time.Minute))
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("launches = %v, want %v", got, want)
		}
	})
}

func TestPeriodicDispatcherProhibitOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := newPeriodicHarness(t, periodicJob("cron", "* * * * *", true))
		stop := h.start()
		defer stop()
		time.Sleep(2*time.Minute + 30*time.Second)
		synctest.Wait()
		first := childAt("cron", start, time.Minute)
		if got := h.launches(); !slices.Equal(got, []string{first}) {
			t.Fatalf("launches = %v, want only %s while it is not dead", got, first)
		}
		// The first child finishes (stopped: dead); the next tick launches.
		child, err := h.st.JobByID(nil, structs.DefaultNamespace, first)
		if err != nil || child == nil {
			t.Fatalf("child %s: %v %v", first, child, err)
		}
		done := child.Copy()
		done.Stop = true
		if err := h.st.UpsertJob(100, done); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		want := []string{first, childAt("cron", start, 3*time.Minute)}
		if got := h.launches(); !slices.Equal(got, want) {
			t.Fatalf("launches = %v, want %v", got, want)
		}
	})
}

func TestPeriodicDispatcherIgnoresDisabledAndStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		job := periodicJob("cron", "* * * * *", false)
		job.Periodic.Enabled = false
		h := newPeriodicHarness(t, job)
		stop := h.start()
		defer stop()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		if got := h.launches(); len(got) != 0 {
			t.Fatalf("a disabled periodic job launched %v", got)
		}
	})
}

// TestServerPeriodicJob runs the dispatcher of a real server: the
// periodic job is registered without an evaluation and is "running"; its
// tick launches a child through raft, with an evaluation that places it;
// force launches one more.
func TestServerPeriodicJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		job := periodicJob("report", "*/5 * * * *", false)
		resp := registerJob(t, s, job)
		if resp.EvalID != "" || resp.EvalCreateIndex != 0 {
			t.Fatalf("a periodic job got an evaluation: %+v", resp)
		}
		parent, err := s.State().JobByID(nil, structs.DefaultNamespace, "report")
		if err != nil || parent == nil {
			t.Fatalf("parent: %v %v", parent, err)
		}
		if parent.Status != structs.JobStatusRunning {
			t.Errorf("parent status = %q, want running", parent.Status)
		}
		next := parent.Periodic.Next(time.Now())
		time.Sleep(time.Until(next) + time.Second)
		synctest.Wait()
		childID := periodicChild(parent, next).ID
		child, err := s.State().JobByID(nil, structs.DefaultNamespace, childID)
		if err != nil || child == nil {
			t.Fatalf("child %s after the tick: %v %v", childID, child, err)
		}
		if child.ParentID != "report" || child.Periodic != nil {
			t.Errorf("child = ParentID %q Periodic %+v", child.ParentID, child.Periodic)
		}
		evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, childID)
		if err != nil || !slices.ContainsFunc(evals, func(e *structs.Evaluation) bool { return e.TriggeredBy == structs.EvalTriggerPeriodicJob }) {
			t.Fatalf("child has no %s evaluation: %v %v", structs.EvalTriggerPeriodicJob, evals, err)
		}
		// The node's heartbeat lapsed during the wait: it registers again
		// and the child is placed.
		registerNode(t, s, testNode("node-1", 4000, 4096))
		waitState(t, s, "the child placed", func(ws memdb.WatchSet) (bool, string) {
			n := len(allocsOfWatch(t, s, ws, childID, structs.AllocDesiredStatusRun))
			return n == 1, fmt.Sprintf("%d allocations", n)
		})
		rec, err := s.State().PeriodicLaunchByID(nil, structs.DefaultNamespace, "report")
		if err != nil || rec == nil || !rec.Launch.Equal(next) {
			t.Errorf("launch record = %+v %v, want %s", rec, err, next)
		}

		time.Sleep(time.Second)
		forced, err := s.JobPeriodicForce(context.Background(), &structs.PeriodicForceRequest{JobID: "report"})
		if err != nil {
			t.Fatal(err)
		}
		if forced.EvalID == "" || forced.JobID == childID || forced.EvalCreateIndex == 0 {
			t.Errorf("force = %+v", forced)
		}
		if _, err := s.JobPeriodicForce(context.Background(), &structs.PeriodicForceRequest{JobID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("force of a missing job: %v", err)
		}
		registerJob(t, s, testJob("plain", 1, 100, 100))
		if _, err := s.JobPeriodicForce(context.Background(), &structs.PeriodicForceRequest{JobID: "plain"}); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("force of a job that is not periodic: %v", err)
		}
	})
}
