// Command shimmem measures what idle task shims cost, with many of them
// running at once: their memory (RSS, PSS, private dirty and anonymous
// memory from /proc/<pid>/smaps_rollup) and their wake-ups (context
// switches of all their threads and CPU time, over an interval in which
// nothing asks them anything).
//
// By default it starts -n shims itself with shim.Start, as raw_exec does,
// each running /bin/sleep, with the shim binary -shim (drover-shim, or
// drover); -requests has each shim answer that many stats requests first
// (as an agent does every second while someone reads a task's stats), to
// measure a shim after it has collected garbage. With -agent it starts a
// drover agent (and its drover-shim) and a job of -n raw_exec tasks
// instead, and measures the shims the agent started (it asks them for
// stats only while someone reads them).
//
// Usage (from the repository root; binaries are built into a temporary
// directory unless given):
//
//	go run ./bench/shimmem -n 100
//	go run ./bench/shimmem -n 100 -shim drover
//	go run ./bench/shimmem -n 100 -requests 1000
//	go run ./bench/shimmem -n 100 -agent
//
// Where it sits in the data flow: outside the agent, watching the shims
// drivers start (drivers/shared/shim).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/bench/internal/harness"
	"github.com/drover-io/drover/drivers/shared/shim"
)

func main() {
	n := flag.Int("n", 100, "shims (tasks) to run at once")
	bin := flag.String("bin", "", "directory holding drover and drover-shim (default: go build both)")
	shimBin := flag.String("shim", shim.Binary, "direct mode: the binary shims run: drover-shim or drover")
	requests := flag.Int("requests", 0, "direct mode: stats requests each shim answers before the idle interval")
	agent := flag.Bool("agent", false, "run the tasks through a drover agent")
	settle := flag.Duration("settle", 5*time.Second, "wait after the last shim started before measuring")
	idle := flag.Duration("idle", 30*time.Second, "interval over which wake-ups are counted")
	flag.Parse()
	if err := run(*n, *bin, *shimBin, *requests, *agent, *settle, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "shimmem:", err)
		os.Exit(1)
	}
}

func run(n int, binDir, shimBin string, requests int, agent bool, settle, idle time.Duration) (err error) {
	root, err := os.MkdirTemp("", "drover-bench-shimmem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if binDir == "" {
		binDir = root
		if _, err := harness.Build(root); err != nil {
			return err
		}
	}
	fmt.Printf("machine: %s/%s, %d CPUs (runtime.NumCPU)\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	var shims []int
	if agent {
		a, pids, err := startThroughAgent(filepath.Join(binDir, "drover"), root, n)
		if a != nil {
			defer func() {
				if err != nil {
					fmt.Fprintf(os.Stderr, "agent output:\n%s\n", a.Log())
				}
				_ = a.Interrupt()
				a.KillLeftovers()
			}()
		}
		if err != nil {
			return err
		}
		shims = pids
		fmt.Printf("mode: %d raw_exec tasks through a drover agent (it asks for stats only while someone reads them)\n", n)
	} else {
		exe := filepath.Join(binDir, shimBin)
		hs, err := startDirect(exe, root, n)
		defer func() {
			for _, h := range hs {
				_ = h.Stop(context.Background(), "SIGKILL", 0)
			}
		}()
		if err != nil {
			return err
		}
		for _, h := range hs {
			shims = append(shims, h.State().ShimPID)
		}
		if st, err := os.Stat(exe); err == nil {
			fmt.Printf("mode: %d shims started directly, binary %s (%.1f MiB)\n", n, shimBin, float64(st.Size())/(1<<20))
		}
		if requests > 0 {
			start := time.Now()
			for _, h := range hs {
				for range requests {
					if _, err := h.Stats(context.Background()); err != nil {
						return fmt.Errorf("stats: %w", err)
					}
				}
			}
			el := time.Since(start)
			fmt.Printf("answered %d stats requests each in %v (%.0f µs per request, client included)\n",
				requests, el.Round(time.Millisecond), float64(el.Microseconds())/float64(n*requests))
		}
	}
	time.Sleep(settle)

	before := make([]activity, len(shims))
	for i, pid := range shims {
		if before[i], err = readActivity(pid); err != nil {
			return err
		}
	}
	time.Sleep(idle)
	var switches, ticks int64
	threads := 0
	for i, pid := range shims {
		a, err := readActivity(pid)
		if err != nil {
			return err
		}
		switches += a.switches - before[i].switches
		ticks += a.ticks - before[i].ticks
		threads = max(threads, a.threads)
	}
	fmt.Printf("\nover %v idle: %d context switches in all %d shims (%.3f per shim per second), %d CPU ticks (1/100 s) in all; up to %d threads per shim\n",
		idle, switches, len(shims), float64(switches)/float64(len(shims))/idle.Seconds(), ticks, threads)

	var rss, pss, pd, anon []int64
	for _, pid := range shims {
		m, err := harness.ReadMem(pid)
		if err != nil {
			return err
		}
		rss, pss, pd, anon = append(rss, m.RSS), append(pss, m.PSS), append(pd, m.PrivateDirty), append(anon, m.Anonymous)
	}
	fmt.Printf("\nmemory per shim with %d running (min / median / max):\n", len(shims))
	for _, row := range []struct {
		name string
		kib  []int64
	}{{"RSS", rss}, {"PSS", pss}, {"private dirty", pd}, {"anonymous", anon}} {
		slices.Sort(row.kib)
		lo, mid, hi := row.kib[0], row.kib[len(row.kib)/2], row.kib[len(row.kib)-1]
		fmt.Printf("  %-14s %.2f / %.2f / %.2f MiB (median %.2f MB)\n", row.name, mib(lo), mib(mid), mib(hi), float64(mid)*1024/1e6)
	}
	return nil
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// startDirect starts n shims running /bin/sleep with the shim binary exe.
func startDirect(exe, root string, n int) ([]*shim.Handle, error) {
	var hs []*shim.Handle
	for i := range n {
		dir := filepath.Join(root, "shims", strconv.Itoa(i))
		h, err := shim.Start(context.Background(), exe, []string{shim.Subcommand}, &shim.Spec{
			ID:         "bench-" + strconv.Itoa(i),
			Command:    "/bin/sleep",
			Args:       []string{"1000000"},
			StdoutPath: filepath.Join(dir, "stdout"),
			StderrPath: filepath.Join(dir, "stderr"),
			StateDir:   filepath.Join(dir, "state"),
		})
		if err != nil {
			return hs, fmt.Errorf("start shim %d: %w", i, err)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// startThroughAgent starts an agent and a job of n raw_exec tasks, and
// returns the agent and the pids of the shims it started.
func startThroughAgent(bin, root string, n int) (*harness.Agent, []int, error) {
	a, err := harness.NewAgent(bin, root, "bench-shimmem", harness.Combined)
	if err != nil {
		return nil, nil, err
	}
	if _, err := a.Start(); err != nil {
		return nil, nil, err // nothing to stop
	}
	if err := a.WaitReady(nil, 2*time.Minute); err != nil {
		return a, nil, err
	}
	c := a.Client()
	const jobID = "bench-shimmem"
	if err := harness.RunJob(c, harness.SleepJob(jobID, n)); err != nil {
		return a, nil, err
	}
	if err := a.Poll(5*time.Minute, 200*time.Millisecond, "the allocs running", func() (bool, string) {
		return harness.AllRunning(c, jobID, n)
	}); err != nil {
		return a, nil, err
	}
	t, err := harness.ScanTree(a.Dir)
	if err != nil {
		return a, nil, err
	}
	if len(t.Shims) != n {
		return a, nil, fmt.Errorf("%d shims run, want %d", len(t.Shims), n)
	}
	var pids []int
	for pid := range t.Shims {
		pids = append(pids, pid)
	}
	return a, pids, nil
}

// activity is what a process has done so far.
type activity struct {
	switches int64 // voluntary and involuntary context switches, all threads
	ticks    int64 // utime + stime, all threads
	threads  int
}

// readActivity reads pid's context switches (summed over its threads) and
// CPU time.
func readActivity(pid int) (activity, error) {
	var a activity
	dir := "/proc/" + strconv.Itoa(pid)
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil {
		return a, fmt.Errorf("threads of %d: %w", pid, err)
	}
	for _, t := range tasks {
		f, err := os.Open(dir + "/task/" + t.Name() + "/status")
		if err != nil {
			continue // the thread exited
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				a.switches += n
			}
		}
		f.Close()
		a.threads++
	}
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return a, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return a, fmt.Errorf("stat of %d: too short", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	a.ticks = u + s
	return a, nil
}
