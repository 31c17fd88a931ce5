package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/api"
)

// The chaos test restarts a persistent agent again and again while its
// allocations start, roll to a new version and stop, and checks after each
// restart that every allocation converged: exactly one task process per
// running allocation, none for a stopped one, none duplicated, lost or
// stuck. Its kill moments are drawn from a seeded random source; the seed
// is logged, and DROVER_CHAOS_SEED=<n> replays a run.
const (
	// chaosKillRounds are the SIGKILL rounds; chaosCleanRounds the
	// SIGTERM/SIGINT ones.
	chaosKillRounds  = 10
	chaosCleanRounds = 2
	// chaosJobs raw_exec jobs of chaosCount allocations each run at most;
	// the first round starts them all at once.
	chaosJobs  = 5
	chaosCount = 6
	// chaosMaxKillDelay bounds the random wait between an action and the
	// agent's death.
	chaosMaxKillDelay = 700 * time.Millisecond
	// chaosConvergeTimeout bounds each wait for convergence: generous, as
	// the machine may be loaded and the binary built with -race. It is a
	// bound on failure, not a pause: the wait ends with the condition.
	chaosConvergeTimeout = 2 * time.Minute
)

// chaosJob is what the test wants of one job.
type chaosJob struct {
	id      string
	driver  string
	count   int
	version int  // the CHAOS_VERSION its tasks run with
	running bool // registered and not stopped
}

// chaosHCL is a service job of count allocations of one task "t" running
// marker (a unique "/bin/sleep <n>") with CHAOS_VERSION in its
// environment. Restarts and reschedules are off: a task lost by the agent
// would show as a failed allocation instead of being hidden by a
// replacement. Updates roll half the allocations (at least two) at a
// time.
func chaosHCL(j *chaosJob, marker []string) string {
	quoted := make([]string, len(marker)-1)
	for i, a := range marker[1:] {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`job %q {
  type = "service"

  update {
    max_parallel      = %d
    min_healthy_time  = "100ms"
    healthy_deadline  = "2m"
    progress_deadline = "3m"
  }

  group "g" {
    count = %d

    restart {
      attempts = 0
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "t" {
      driver       = %q
      kill_timeout = "3s"

      env {
        CHAOS_VERSION = "%d"
      }

      config {
        command = %q
        args    = [%s]
      }

      resources {
        cpu    = 10
        memory = 32
      }
    }
  }
}
`, j.id, max(j.count/2, 2), j.count, j.driver, j.version, marker[0], strings.Join(quoted, ", "))
}

// chaos drives one agent through restarts.
type chaos struct {
	t      *testing.T
	a      *persistentAgent
	c      *api.Client
	rng    *rand.Rand
	marker []string
	jobs   []*chaosJob
	// restarts counts the agent's restarts, by how the agent went down.
	restarts map[string]int
}

// chaosSeed returns DROVER_CHAOS_SEED, or a fresh seed; it is logged.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DROVER_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DROVER_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("chaos seed %d (replay with DROVER_CHAOS_SEED=%d)", seed, seed)
	return seed
}

// newChaos starts a persistent combined agent and registers a cleanup
// that kills whatever process still runs the test's marker, wherever it
// runs (a task started outside any shim included).
func newChaos(t *testing.T, name string) *chaos {
	t.Helper()
	a := newPersistentAgent(t, name, roleCombined)
	seed := chaosSeed(t)
	ch := &chaos{
		t:        t,
		a:        a,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		marker:   sleepMarker(),
		restarts: map[string]int{},
	}
	t.Cleanup(func() { killMarked(t, ch.marker) })
	for i := range chaosJobs {
		ch.jobs = append(ch.jobs, &chaosJob{id: fmt.Sprintf("chaos-%d", i+1), driver: "raw_exec", count: chaosCount})
	}
	// The exec driver's tasks run isolated (namespaces, cgroups) under the
	// same shims: one small job of them joins the rounds where it can run.
	if os.Geteuid() == 0 {
		ch.jobs = append(ch.jobs, &chaosJob{id: "chaos-exec", driver: "exec", count: 2})
	} else {
		t.Logf("no exec job: the exec driver needs root")
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	ch.c = a.client(t)
	return ch
}

// register submits j's current spec (a start, or an update when it runs).
func (ch *chaos) register(j *chaosJob) {
	ch.t.Helper()
	job, err := ch.c.Jobs().ParseHCL(chaosHCL(j, ch.marker), true)
	if err != nil {
		ch.t.Fatalf("parse job %s: %v", j.id, err)
	}
	if _, _, err := ch.c.Jobs().Register(job, nil); err != nil {
		ch.t.Fatalf("register job %s: %v", j.id, err)
	}
	j.running = true
}

// stop deregisters j.
func (ch *chaos) stop(j *chaosJob) {
	ch.t.Helper()
	if _, _, err := ch.c.Jobs().Deregister(j.id, false, nil); err != nil {
		ch.t.Fatalf("stop job %s: %v", j.id, err)
	}
	j.running = false
}

// act applies one random action, or start when no job runs yet and
// first is set: it starts a job that is not running, rolls a running job
// to a new version, or stops a running job. It returns what it did.
func (ch *chaos) act() string {
	var stopped, running []*chaosJob
	for _, j := range ch.jobs {
		if j.running {
			running = append(running, j)
		} else {
			stopped = append(stopped, j)
		}
	}
	kinds := []string{}
	if len(stopped) > 0 {
		kinds = append(kinds, "start")
	}
	if len(running) > 0 {
		kinds = append(kinds, "update", "stop")
	}
	switch kind := kinds[ch.rng.IntN(len(kinds))]; kind {
	case "start":
		j := stopped[ch.rng.IntN(len(stopped))]
		j.version++
		ch.register(j)
		return fmt.Sprintf("start %s v%d", j.id, j.version)
	case "update":
		j := running[ch.rng.IntN(len(running))]
		j.version++
		ch.register(j)
		return fmt.Sprintf("update %s to v%d", j.id, j.version)
	default:
		j := running[ch.rng.IntN(len(running))]
		ch.stop(j)
		return "stop " + j.id
	}
}

// killDelay draws the time between an action and the agent's death.
func (ch *chaos) killDelay() time.Duration {
	return time.Duration(ch.rng.Int64N(int64(chaosMaxKillDelay)))
}

// restart takes the agent down (how: "kill9", "term" or "int") after
// delay, starts it again on the same data dir and waits until it serves.
func (ch *chaos) restart(how string, delay time.Duration) {
	ch.t.Helper()
	a := ch.a
	select {
	case <-a.exited:
		ch.t.Fatalf("agent %s exited on its own (%v); its output:\n%s", a.name, a.err, a.sinceLastStart())
	case <-time.After(delay): // the random kill moment: the point of the test
	}
	switch how {
	case "kill9":
		a.kill9(ch.t)
	case "term":
		a.signalAndWait(ch.t, syscall.SIGTERM)
	case "int":
		a.signalAndWait(ch.t, syscall.SIGINT)
	default:
		ch.t.Fatalf("unknown restart %q", how)
	}
	ch.restarts[how]++
	begin := time.Now()
	a.start(ch.t)
	a.waitReady(ch.t, surviveStartTimeout)
	took := time.Since(begin)
	ch.t.Logf("  the agent serves again after %s", took.Round(time.Millisecond))
	if took > 10*time.Second {
		ch.t.Logf("  slow restart; the agent's log since its start, without DEBUG lines:\n%s", withoutDebug(a.sinceLastStart()))
	}
}

// withoutDebug drops an agent log's DEBUG lines.
func withoutDebug(log string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(log, "\n") {
		if !strings.Contains(line, "level=DEBUG") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// chaosAllocs returns the allocations of the test's jobs.
func (ch *chaos) chaosAllocs() ([]*api.AllocationListStub, uint64, error) {
	stubs, qm, err := ch.c.Allocations().List(nil)
	if err != nil {
		return nil, 0, err
	}
	var out []*api.AllocationListStub
	for _, s := range stubs {
		if ch.job(s.JobID) != nil {
			out = append(out, s)
		}
	}
	return out, qm.LastIndex, nil
}

func (ch *chaos) job(id string) *chaosJob {
	for _, j := range ch.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

// markedByAlloc maps the alloc ID in the environment of every process
// running the marker to its pids; a marker process without one is listed
// under "".
func markedByAlloc(tt *taskTree) map[string][]int {
	out := map[string][]int{}
	for _, pid := range tt.marked {
		id, err := procEnv(pid, "NOMAD_ALLOC_ID")
		if err != nil {
			id = ""
		}
		out[id] = append(out[id], pid)
	}
	return out
}

// converged reports whether the cluster and the host are where the jobs
// say: each running job has count allocations of its version running, each
// with exactly one task process under a shim and no restart; every other
// allocation is complete and runs nothing; and nothing runs the marker
// outside these allocations. failed is set for states that can never
// converge (a lost or failed allocation, a restarted task).
func (ch *chaos) converged() (ok bool, why string, failed bool) {
	allocs, _, err := ch.chaosAllocs()
	if err != nil {
		return false, err.Error(), false
	}
	tt, err := scanTasks(ch.a.dataDir, ch.marker)
	if err != nil {
		return false, err.Error(), false
	}
	procs := markedByAlloc(tt)
	for id, pids := range procs {
		if id != "" && len(pids) > 1 {
			// No task ever has two processes running the marker: a
			// second one is a task started twice.
			return false, fmt.Sprintf("alloc %s runs %d task processes %v: duplicated", id, len(pids), pids), true
		}
	}
	want := map[string]int{} // job -> running allocs of its version
	wantAllocs := map[string]bool{}
	for _, al := range allocs {
		j := ch.job(al.JobID)
		ts := al.TaskStates["t"]
		switch al.ClientStatus {
		case api.AllocClientStatusFailed, api.AllocClientStatusLost:
			return false, fmt.Sprintf("alloc %s of %s is %s (%s):%s", al.ID[:8], al.JobID, al.ClientStatus, al.ClientDescription, eventsString(ts)), true
		}
		if ts != nil && (ts.Restarts > 0 || ts.Failed || countEvents(ts, "Started") > 1) {
			return false, fmt.Sprintf("alloc %s of %s: task restarted or failed:%s", al.ID[:8], al.JobID, eventsString(ts)), true
		}
		if al.DesiredStatus == api.AllocDesiredStatusRun && j.running {
			if al.ClientStatus != api.AllocClientStatusRunning {
				return false, fmt.Sprintf("alloc %s of %s is %s", al.ID[:8], al.JobID, al.ClientStatus), false
			}
			v, err := allocVersion(procs[al.ID])
			if err != nil {
				return false, fmt.Sprintf("alloc %s of %s: %v", al.ID[:8], al.JobID, err), false
			}
			if v == j.version {
				want[j.id]++
			}
			wantAllocs[al.ID] = true
			continue
		}
		if al.ClientStatus != api.AllocClientStatusComplete {
			return false, fmt.Sprintf("alloc %s of %s (desired %s) is %s", al.ID[:8], al.JobID, al.DesiredStatus, al.ClientStatus), false
		}
	}
	for _, j := range ch.jobs {
		if j.running && want[j.id] != j.count {
			return false, fmt.Sprintf("job %s: %d allocs of version %d run, want %d", j.id, want[j.id], j.version, j.count), false
		}
	}
	for id, pids := range procs {
		switch {
		case id == "" || !wantAllocs[id]:
			return false, fmt.Sprintf("pid %v runs the marker for alloc %q, which should run nothing", pids, id), false
		}
		if _, ok := tt.tasks[pids[0]]; !ok {
			return false, fmt.Sprintf("alloc %s: task pid %d is not a shim's child", id[:8], pids[0]), false
		}
	}
	if len(procs) != len(wantAllocs) {
		return false, fmt.Sprintf("%d allocs run a task process, want %d", len(procs), len(wantAllocs)), false
	}
	if len(tt.shims) != len(wantAllocs) {
		return false, fmt.Sprintf("%d shims run under the data dir, want %d", len(tt.shims), len(wantAllocs)), false
	}
	return true, "", false
}

// allocVersion returns the CHAOS_VERSION of an alloc's one task process.
func allocVersion(pids []int) (int, error) {
	if len(pids) != 1 {
		return 0, fmt.Errorf("%d task processes %v, want 1", len(pids), pids)
	}
	s, err := procEnv(pids[0], "CHAOS_VERSION")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// waitConverged waits until converged holds. It re-checks whenever the
// cluster's allocations change (a blocking query) and at least every
// second, for the processes to catch up with the reported states; it fails
// at once on a state that can never converge.
func (ch *chaos) waitConverged(what string) {
	ch.t.Helper()
	begin := time.Now()
	deadline := begin.Add(chaosConvergeTimeout)
	var index uint64
	for {
		ch.a.checkAlive(ch.t)
		ok, why, failed := ch.converged()
		switch {
		case ok:
			ch.t.Logf("  converged after %s", time.Since(begin).Round(time.Millisecond))
			return
		case failed:
			ch.t.Fatalf("%s: %s", what, why)
		case time.Now().After(deadline):
			ch.t.Fatalf("%s: not converged after %s: %s", what, chaosConvergeTimeout, why)
		}
		_, qm, err := ch.c.Allocations().List(&api.QueryOptions{WaitIndex: index, WaitTime: time.Second})
		if err != nil {
			ch.t.Fatalf("%s: blocking query for allocations: %v", what, err)
		}
		index = qm.LastIndex
	}
}

// stopAllAndCheckGone stops every job, waits until every allocation is
// complete, waits for the shims to exit, and checks that nothing of the
// test runs any more.
func (ch *chaos) stopAllAndCheckGone() {
	ch.t.Helper()
	for _, j := range ch.jobs {
		if j.running {
			ch.stop(j)
		}
	}
	ch.waitConverged("every job stopped")
	tt, err := scanTasks(ch.a.dataDir, ch.marker)
	if err != nil {
		ch.t.Fatal(err)
	}
	var shims []int
	for pid := range tt.shims {
		shims = append(shims, pid)
	}
	// A shim exits right after its task's exit is recorded and reported.
	if err := waitProcsExit(shims, 30*time.Second); err != nil {
		ch.t.Errorf("shims left after every job stopped: %v", err)
	}
	tt, err = scanTasks(ch.a.dataDir, ch.marker)
	if err != nil {
		ch.t.Fatal(err)
	}
	if len(tt.shims)+len(tt.tasks)+len(tt.marked) > 0 {
		ch.t.Errorf("left behind: shims %v, their children %v, marker processes %v", tt.shims, tt.tasks, tt.marked)
	}
}

// waitProcsExit waits until none of pids runs, on pidfds (no polling); it
// returns an error naming those still running after timeout.
func waitProcsExit(pids []int, timeout time.Duration) error {
	fds := map[int]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return fmt.Errorf("pidfd of %d: %w", pid, err)
		}
		fds[pid] = fd
	}
	deadline := time.Now().Add(timeout)
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			var running []int
			for pid := range fds {
				if alive(pid) {
					running = append(running, pid)
				}
			}
			sort.Ints(running)
			if len(running) == 0 {
				return nil
			}
			return fmt.Errorf("pids %v still run after %s", running, timeout)
		}
		pfds := make([]unix.PollFd, 0, len(fds))
		pidOf := make([]int, 0, len(fds))
		for pid, fd := range fds {
			pfds = append(pfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			pidOf = append(pidOf, pid)
		}
		if _, err := unix.Poll(pfds, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("poll pidfds: %w", err)
		}
		for i, p := range pfds {
			if p.Revents != 0 {
				unix.Close(fds[pidOf[i]])
				delete(fds, pidOf[i])
			}
		}
	}
	return nil
}

// killMarked SIGKILLs every process running marker, so that a failing
// test leaves nothing behind; it reports each one.
func killMarked(t *testing.T, marker []string) {
	ps, err := listProcs()
	if err != nil {
		t.Errorf("look for leftover task processes: %v", err)
		return
	}
	for _, p := range ps {
		if equalArgs(p.args, marker) {
			if err := syscall.Kill(p.pid, syscall.SIGKILL); err == nil {
				t.Logf("killed a leftover task process %d", p.pid)
			}
		}
	}
}

// signalAndWait sends sig to the agent and fails the test unless it exits
// cleanly in time.
func (a *persistentAgent) signalAndWait(t *testing.T, sig syscall.Signal) {
	t.Helper()
	a.checkAlive(t)
	if err := a.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal agent %s: %v", a.name, err)
	}
	select {
	case <-a.exited:
		if a.err != nil {
			t.Fatalf("agent %s exited with %v after %v; its output:\n%s", a.name, a.err, sig, a.sinceLastStart())
		}
	case <-time.After(25 * time.Second):
		// Before the agent's own shutdown timeout (30s): SIGQUIT makes it
		// print every goroutine's stack, to see what holds the shutdown.
		_ = syscall.Kill(a.cmd.Process.Pid, syscall.SIGQUIT)
		<-a.exited
		t.Fatalf("agent %s did not exit within 25s of %v; its output (stacks at the end):\n%s", a.name, sig, a.sinceLastStart())
	}
}

// TestChaosAgentRestarts kills the agent with SIGKILL at random moments
// while allocations start, roll to new versions and stop (ten rounds),
// then restarts it cleanly with SIGTERM or SIGINT the same way, then
// restarts it (SIGKILL, then SIGTERM) with an update submitted just
// before: after every restart each allocation converges with zero
// duplicated, zero lost and zero stuck allocations, and once every job
// is stopped no shim or task process is left.
func TestChaosAgentRestarts(t *testing.T) {
	t.Parallel()
	ch := newChaos(t, "chaos")
	start := time.Now()

	// Round 0 starts every job at once: 30 raw_exec allocations (and 2
	// exec ones) starting.
	for _, j := range ch.jobs {
		j.version = 1
		ch.register(j)
	}
	d := ch.killDelay()
	t.Logf("round 0: start %d jobs, SIGKILL after %s", len(ch.jobs), d)
	ch.restart("kill9", d)
	ch.waitConverged("round 0")

	for r := 1; r < chaosKillRounds; r++ {
		did := ch.act()
		d := ch.killDelay()
		t.Logf("round %d: %s, SIGKILL after %s", r, did, d)
		ch.restart("kill9", d)
		ch.waitConverged(fmt.Sprintf("round %d (%s)", r, did))
	}
	t.Logf("%d SIGKILL rounds done after %s", chaosKillRounds, time.Since(start).Round(time.Millisecond))

	for r := range chaosCleanRounds {
		how := []string{"term", "int"}[ch.rng.IntN(2)]
		did := ch.act()
		d := ch.killDelay()
		t.Logf("clean round %d: %s, SIG%s after %s", r, did, strings.ToUpper(how), d)
		ch.restart(how, d)
		ch.waitConverged(fmt.Sprintf("clean round %d (%s)", r, did))
	}

	// An update submitted just before the agent goes down: the restarted
	// agent finds the old allocations to stop while it re-attaches.
	for _, how := range []string{"kill9", "term"} {
		var j *chaosJob
		for _, c := range ch.jobs {
			if c.running {
				j = c
				break
			}
		}
		if j == nil {
			j = ch.jobs[0]
		} else {
			j.version++
		}
		ch.register(j)
		t.Logf("pending update: %s v%d, then %s at once", j.id, j.version, how)
		ch.restart(how, 0)
		ch.waitConverged(fmt.Sprintf("update of %s pending across a %s restart", j.id, how))
	}

	ch.stopAllAndCheckGone()
	t.Logf("restarts %v in %s", ch.restarts, time.Since(start).Round(time.Millisecond))
}
