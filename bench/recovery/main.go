// Command recovery measures how long a persistent drover agent takes to
// recover its running raw_exec tasks after `kill -9`, and the agent's
// memory with 0 and n running tasks.
//
// It builds the drover binary (or takes -bin), starts `drover agent
// -config` (server and client in one process, data dir in a temporary
// directory), samples the agent's memory with no task, runs a job of n
// raw_exec allocs (each task writes its pid into its local dir and execs
// sleep), samples the agent's and the shims' memory, SIGKILLs the agent
// process (only it: systemd's KillMode=process), starts it again on the
// same data dir and times, from the exec of the new agent:
//
//   - leader: the HTTP API answers with a leader;
//   - node ready: the agent's node is ready;
//   - re-attached: the time of the agent's nth "re-attached to task" log
//     line (a combined agent re-attaches before it serves the API);
//   - recovered: re-attached, and the API reports all n allocs running.
//
// Then it checks that the pids the API serves are the pids from before the
// kill, that no task restarted, and that n shims and n tasks run; samples
// the agent's memory again; stops the job; and waits until no shim or task
// is left. Usage (from the repository root):
//
//	go run ./bench/recovery -n 100
//	go run ./bench/recovery -n 100 -split
//
// -split runs a server agent and a client-only agent (joining it over the
// RPC port) and kills the client agent: its recovery needs no election.
// Without -split the one agent is server and client.
//
// Where it sits in the data flow: outside the agent, watching the client's
// restore path (allocrunner.Restore, taskrunner.Restore, RecoverTask).
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/bench/internal/harness"
)

// jobID is the benchmark's job.
const jobID = "bench-recovery"

func main() {
	n := flag.Int("n", 100, "running allocs (one raw_exec task each)")
	bin := flag.String("bin", "", "the drover binary (default: go build ./cmd/drover)")
	settle := flag.Duration("settle", 5*time.Second, "wait before each memory sample")
	keep := flag.Bool("keep", false, "keep the temporary directory (agent logs, data dir)")
	split := flag.Bool("split", false, "run a server agent and a client-only agent, and kill -9 the client agent")
	flag.Parse()
	if err := run(*n, *bin, *settle, *keep, *split); err != nil {
		fmt.Fprintln(os.Stderr, "recovery:", err)
		os.Exit(1)
	}
}

func run(n int, bin string, settle time.Duration, keep, split bool) (err error) {
	root, err := os.MkdirTemp("", "drover-bench-recovery-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("temporary directory:", root)
	} else {
		defer os.RemoveAll(root)
	}
	if bin == "" {
		if bin, err = harness.Build(root); err != nil {
			return err
		}
	}
	// a runs the tasks; c is the API of the server (a itself, or srv).
	var srv *harness.Agent
	role := harness.Combined
	var servers []string
	if split {
		if srv, err = harness.NewAgent(bin, filepath.Join(root, "server"), "bench-server", harness.Server); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				fmt.Fprintf(os.Stderr, "server agent output:\n%s\n", srv.Log())
			}
			_ = srv.Interrupt()
		}()
		if _, err := srv.Start(); err != nil {
			return err
		}
		if err := srv.WaitReady(nil, 2*time.Minute); err != nil {
			return err
		}
		role, servers = harness.Client, []string{srv.RPCAddr}
	}
	a, err := harness.NewAgent(bin, filepath.Join(root, "agent"), "bench-recovery", role, servers...)
	if err != nil {
		return err
	}
	c := a.Client()
	pidsOf := func() (map[string]int, error) { return harness.TaskPids(c, jobID) }
	if srv != nil {
		c = srv.Client()
		pidsOf = func() (map[string]int, error) { return harness.DiskPids(c, a.Dir, jobID) }
	}
	defer func() {
		if err != nil {
			fmt.Fprintf(os.Stderr, "agent output:\n%s\n", a.Log())
		}
		_ = a.Interrupt()
		if k := a.KillLeftovers(); k > 0 {
			fmt.Fprintf(os.Stderr, "killed %d leftover shims\n", k)
		}
	}()
	fmt.Printf("machine: %s/%s, %d CPUs (runtime.NumCPU); n = %d; split = %v\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), n, split)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at start: %s", b)
	}

	if _, err := a.Start(); err != nil {
		return err
	}
	if err := a.WaitReady(c, 2*time.Minute); err != nil {
		return err
	}
	time.Sleep(settle)
	idle, err := harness.ReadMem(a.PID())
	if err != nil {
		return err
	}

	started := time.Now()
	if err := harness.RunJob(c, harness.SleepJob(jobID, n)); err != nil {
		return err
	}
	if err := a.Poll(10*time.Minute, 100*time.Millisecond, "all allocs running", func() (bool, string) {
		return harness.AllRunning(c, jobID, n)
	}); err != nil {
		return err
	}
	placed := time.Since(started)
	before, err := pidsOf()
	if err != nil {
		return err
	}
	time.Sleep(settle)
	busy, err := harness.ReadMem(a.PID())
	if err != nil {
		return err
	}
	shims, err := shimMem(a.Dir, n)
	if err != nil {
		return err
	}

	if err := a.Kill9(); err != nil {
		return err
	}
	for id, pid := range before {
		if !harness.Alive(pid) {
			return fmt.Errorf("alloc %s: task pid %d died with the agent", id, pid)
		}
	}
	t0, err := a.Start()
	if err != nil {
		return err
	}
	var leader, ready, reattached, recovered time.Duration
	rc := c
	err = a.Poll(10*time.Minute, 10*time.Millisecond, "recovery", func() (bool, string) {
		if leader == 0 && srv == nil {
			if l, err := rc.Status().Leader(); err != nil || l == "" {
				return false, "no leader"
			}
			leader = time.Since(t0)
		}
		if ready == 0 && srv == nil {
			nodes, _, err := rc.Nodes().List(nil)
			if err != nil || len(nodes) == 0 || nodes[0].Status != "ready" {
				return false, "node not ready"
			}
			ready = time.Since(t0)
		}
		if reattached == 0 {
			if got := a.LogCount("re-attached to task"); got < n {
				return false, fmt.Sprintf("%d of %d re-attached", got, n)
			}
			reattached = time.Since(t0)
		}
		if ok, why := harness.AllRunning(rc, jobID, n); !ok {
			return false, why
		}
		recovered = time.Since(t0)
		return true, ""
	})
	if err != nil {
		return err
	}
	// The poll above sees the re-attaches only once the API answers (its
	// listener accepts before the agent serves, so the leader query waits):
	// the agent's log says when they happened.
	if at, ok := logTime(a.Log(), "re-attached to task", n); ok && at.Sub(t0) < reattached {
		reattached = at.Sub(t0)
	}
	after, err := pidsOf()
	if err != nil {
		return err
	}
	if !maps.Equal(before, after) {
		return fmt.Errorf("task pids changed across the restart")
	}
	restarts, startedEvents, err := harness.Restarts(rc, jobID)
	if err != nil {
		return err
	}
	if restarts != 0 || startedEvents != n {
		return fmt.Errorf("after recovery: %d restarts and %d Started events, want 0 and %d", restarts, startedEvents, n)
	}
	tree, err := harness.ScanTree(a.Dir)
	if err != nil {
		return err
	}
	if len(tree.Shims) != n || len(tree.Tasks) != n {
		return fmt.Errorf("after recovery: %d shims and %d tasks run, want %d each", len(tree.Shims), len(tree.Tasks), n)
	}
	time.Sleep(settle)
	recoveredMem, err := harness.ReadMem(a.PID())
	if err != nil {
		return err
	}

	stopAt := time.Now()
	if _, _, err := rc.Jobs().Deregister(jobID, false, nil); err != nil {
		return fmt.Errorf("stop job: %w", err)
	}
	if err := a.Poll(5*time.Minute, 100*time.Millisecond, "every shim and task to be gone", func() (bool, string) {
		t, err := harness.ScanTree(a.Dir)
		if err != nil {
			return false, err.Error()
		}
		for _, pid := range before {
			if harness.Alive(pid) {
				return false, fmt.Sprintf("task pid %d runs", pid)
			}
		}
		return len(t.Shims) == 0 && len(t.Tasks) == 0, fmt.Sprintf("%d shims, %d tasks", len(t.Shims), len(t.Tasks))
	}); err != nil {
		return err
	}
	stopped := time.Since(stopAt)

	fmt.Printf("\nplacement: %d allocs running %s after registering the job\n", n, placed.Round(time.Millisecond))
	fmt.Printf("\nrecovery after kill -9 with %d running allocs (from the exec of the new agent):\n", n)
	if srv == nil {
		fmt.Printf("  leader known:           %s\n", leader.Round(time.Millisecond))
		fmt.Printf("  node ready:             %s\n", ready.Round(time.Millisecond))
	}
	fmt.Printf("  all tasks re-attached:  %s (from the agent's log)\n", reattached.Round(time.Millisecond))
	fmt.Printf("  recovered (re-attached, all allocs running via the API): %s\n", recovered.Round(time.Millisecond))
	fmt.Printf("  same %d pids, 0 restarts, %d shims, %d tasks: ok\n", n, len(tree.Shims), len(tree.Tasks))
	fmt.Printf("  job stop to every shim and task gone: %s\n", stopped.Round(time.Millisecond))
	fmt.Printf("\nagent memory (smaps_rollup):\n")
	fmt.Printf("  %-28s RSS %-10s PSS %-10s anon %s\n", "0 tasks:", harness.MiB(idle.RSS), harness.MiB(idle.PSS), harness.MiB(idle.Anonymous))
	fmt.Printf("  %-28s RSS %-10s PSS %-10s anon %s\n", fmt.Sprintf("%d tasks:", n), harness.MiB(busy.RSS), harness.MiB(busy.PSS), harness.MiB(busy.Anonymous))
	fmt.Printf("  %-28s RSS %-10s PSS %-10s anon %s\n", fmt.Sprintf("%d tasks, after recovery:", n), harness.MiB(recoveredMem.RSS), harness.MiB(recoveredMem.PSS), harness.MiB(recoveredMem.Anonymous))
	fmt.Printf("\nshim memory with %d shims running (min / median / max over shims):\n", n)
	fmt.Printf("  RSS %s / %s / %s\n", harness.MiB(shims.rss[0]), harness.MiB(shims.rss[len(shims.rss)/2]), harness.MiB(shims.rss[len(shims.rss)-1]))
	fmt.Printf("  PSS %s / %s / %s (sum %s)\n", harness.MiB(shims.pss[0]), harness.MiB(shims.pss[len(shims.pss)/2]), harness.MiB(shims.pss[len(shims.pss)-1]), harness.MiB(shims.pssSum))
	return nil
}

// shimStats is the sorted RSS and PSS (KiB) of every shim.
type shimStats struct {
	rss, pss []int64
	pssSum   int64
}

// shimMem reads the memory of the n shims under dataDir.
func shimMem(dataDir string, n int) (*shimStats, error) {
	t, err := harness.ScanTree(dataDir)
	if err != nil {
		return nil, err
	}
	if len(t.Shims) != n {
		return nil, fmt.Errorf("%d shims run, want %d", len(t.Shims), n)
	}
	s := &shimStats{}
	for _, pid := range slices.Sorted(maps.Keys(t.Shims)) {
		m, err := harness.ReadMem(pid)
		if err != nil {
			return nil, err
		}
		s.rss = append(s.rss, m.RSS)
		s.pss = append(s.pss, m.PSS)
		s.pssSum += m.PSS
	}
	sort.Slice(s.rss, func(i, j int) bool { return s.rss[i] < s.rss[j] })
	sort.Slice(s.pss, func(i, j int) bool { return s.pss[i] < s.pss[j] })
	return s, nil
}

// logTime returns the time of the nth line of the agent's log (slog text:
// "time=<RFC 3339> level=... msg=...") whose message is msg.
func logTime(log, msg string, nth int) (time.Time, bool) {
	quoted := "msg=" + strconv.Quote(msg)
	for line := range strings.Lines(log) {
		if !strings.Contains(line, quoted) {
			continue
		}
		if nth--; nth > 0 {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		t, err := time.Parse(time.RFC3339Nano, ts)
		return t, err == nil
	}
	return time.Time{}, false
}
