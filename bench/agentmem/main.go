// Command agentmem measures a -dev agent's memory with many running
// tasks: it starts the agent (server and client in one process), runs one
// job of -n raw_exec tasks, each `/bin/sleep 3600`, and once the job
// summary counts them all running it reads the agent's RSS (VmRSS of
// /proc/<pid>/status, the agent process alone, not its shims) and the
// Go runtime's view (goroutines, live heap, stacks, from the agent's
// /v1/agent/pprof endpoints, which -dev enables) after -early and again
// after -late, and the agent's CPU time between the two readings; with -out it keeps each reading's heap profile there
// (`go tool pprof -top -sample_index=inuse_space <file>`).
//
// Several builds given to -bin (directories holding drover and
// drover-shim, comma-separated) are measured one after the other, each
// -runs times, by the same code, so that their rows compare.
//
// Usage (from the repository root):
//
//	go run ./bench/agentmem -n 1000 -bin /tmp/am/base,/tmp/am/new -runs 2
//
// Where it sits in the data flow: outside the agent, reading its process
// and its HTTP API as a user's script would.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

func main() {
	n := flag.Int("n", 1000, "raw_exec tasks to run")
	bins := flag.String("bin", "", "comma-separated directories holding drover and drover-shim (default: go build both)")
	runs := flag.Int("runs", 1, "runs per build")
	early := flag.Duration("early", 3*time.Second, "first reading, after all tasks run")
	late := flag.Duration("late", 150*time.Second, "second reading, after all tasks run")
	out := flag.String("out", "", "directory to keep heap profiles in")
	flag.Parse()
	if err := run(*n, *bins, *runs, *early, *late, *out); err != nil {
		fmt.Fprintln(os.Stderr, "agentmem:", err)
		os.Exit(1)
	}
}

// reading is what one look at the agent found.
type reading struct {
	rssKiB     int64
	goroutines int
	heapInuse  int64 // bytes of in-use heap spans (runtime.MemStats.HeapInuse)
	heapAlloc  int64 // bytes of live and not yet collected objects
	stackInuse int64
	nextGC     int64
	sys        int64   // bytes the runtime holds from the OS, less what it released
	gcCPU      float64 // runtime.MemStats.GCCPUFraction: the GC's share of the CPU since start
	cpuTicks   int64   // utime + stime of the agent so far, in clock ticks
	// started is how long the n tasks took to run, from the register
	// request (set on the early reading only).
	started time.Duration
}

func run(n int, bins string, runs int, early, late time.Duration, out string) error {
	// A short root: a task API socket's path must fit in 108 bytes.
	root, err := os.MkdirTemp("/tmp", "am")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	dirs := strings.Split(bins, ",")
	if bins == "" {
		if _, err := harness.Build(root); err != nil {
			return err
		}
		dirs = []string{root}
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	fmt.Printf("machine: %s/%s, %d CPUs; %d raw_exec tasks; readings %v and %v after all run\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), n, early, late)
	fmt.Println("| build | run | load | all running after | goroutines | heap in use | stacks | runtime total | next GC | RSS early | RSS late | agent CPU between | GC CPU since start |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for r := 1; r <= runs; r++ {
		for i, dir := range dirs {
			tag := fmt.Sprintf("%d-%d", i, r)
			e, l, load, err := measure(filepath.Join(dir, "drover"), filepath.Join(root, tag), n, early, late, out, tag)
			if err != nil {
				return fmt.Errorf("build %s, run %d: %w", dir, r, err)
			}
			fmt.Printf("| %s | %d | %s | %.1f s | %d | %s | %s | %s | %s | %s | %s | %.2f s | %.1f%% |\n", dir, r, load, e.started.Seconds(), l.goroutines,
				mib(l.heapInuse), mib(l.stackInuse), mib(l.sys), mib(l.nextGC), harness.MiB(e.rssKiB), harness.MiB(l.rssKiB),
				float64(l.cpuTicks-e.cpuTicks)/clockTicks, 100*l.gcCPU)
		}
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// measure runs one agent and job and takes the two readings.
func measure(bin, root string, n int, early, late time.Duration, out, tag string) (e, l reading, load string, err error) {
	a, err := harness.NewDevAgent(bin, root, "bench-agentmem")
	if err != nil {
		return e, l, "", err
	}
	if _, err := a.Start(); err != nil {
		return e, l, "", err
	}
	defer func() {
		if err != nil {
			fmt.Fprintf(os.Stderr, "agent output (tail):\n%s\n", tail(a.Log(), 4000))
		}
		_ = a.Interrupt()
		a.KillLeftovers()
	}()
	if err := a.WaitReady(nil, 2*time.Minute); err != nil {
		return e, l, "", err
	}
	c := a.Client()
	const jobID = "bench-agentmem"
	t0 := time.Now()
	if err := harness.RunJob(c, sleepJob(jobID, n)); err != nil {
		return e, l, "", err
	}
	if err := waitRunning(c, jobID, n, 10*time.Minute); err != nil {
		return e, l, "", err
	}
	load = harness.LoadAvg()
	done := time.Now()
	started := done.Sub(t0)
	time.Sleep(early) // a reading at a fixed time after, not a wait for an event
	if e, err = read(a, out, tag+"-early"); err != nil {
		return e, l, load, err
	}
	e.started = started
	time.Sleep(time.Until(done.Add(late)))
	l, err = read(a, out, tag+"-late")
	return e, l, load, err
}

// waitRunning blocks on the job summary until n allocs run.
func waitRunning(c *api.Client, jobID string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var index uint64
	for {
		if time.Now().After(deadline) {
			return fmt.Errorf("not all %d allocs running after %v", n, timeout)
		}
		q := &api.QueryOptions{WaitIndex: index, WaitTime: 10 * time.Second}
		s, meta, err := c.Jobs().Summary(jobID, q)
		if err != nil {
			return fmt.Errorf("job summary: %w", err)
		}
		index = meta.LastIndex
		running, failed := 0, 0
		for _, tg := range s.Summary {
			running += tg.Running
			failed += tg.Failed + tg.Lost
		}
		if failed > 0 {
			return fmt.Errorf("%d allocs failed or lost", failed)
		}
		if running >= n {
			return nil
		}
	}
}

// read takes one reading of the agent.
func read(a *harness.Agent, out, tag string) (reading, error) {
	var r reading
	rss, err := vmRSS(a.PID())
	if err != nil {
		return r, err
	}
	r.rssKiB = rss
	g, err := get(a.Addr + "/v1/agent/pprof/goroutine?debug=1")
	if err != nil {
		return r, err
	}
	if m := regexp.MustCompile(`goroutine profile: total (\d+)`).FindSubmatch(g); m != nil {
		r.goroutines, _ = strconv.Atoi(string(m[1]))
	}
	h, err := get(a.Addr + "/v1/agent/pprof/heap?debug=1")
	if err != nil {
		return r, err
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"HeapInuse", &r.heapInuse}, {"HeapAlloc", &r.heapAlloc}, {"Stack", &r.stackInuse}, {"NextGC", &r.nextGC}, {"Sys", &r.sys}} {
		if m := regexp.MustCompile(`# ` + f.name + ` = (\d+)`).FindSubmatch(h); m != nil {
			*f.v, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
	}
	if m := regexp.MustCompile(`# HeapReleased = (\d+)`).FindSubmatch(h); m != nil {
		released, _ := strconv.ParseInt(string(m[1]), 10, 64)
		r.sys -= released
	}
	if m := regexp.MustCompile(`# GCCPUFraction = ([0-9.e-]+)`).FindSubmatch(h); m != nil {
		r.gcCPU, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if r.cpuTicks, err = cpuTicks(a.PID()); err != nil {
		return r, err
	}
	if out != "" {
		p, err := get(a.Addr + "/v1/agent/pprof/heap")
		if err != nil {
			return r, err
		}
		if err := os.WriteFile(filepath.Join(out, "heap-"+tag+".pb.gz"), p, 0o644); err != nil {
			return r, err
		}
	}
	return r, nil
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// vmRSS reads VmRSS (KiB) from /proc/<pid>/status.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times (100
// on Linux).
const clockTicks = 100

// cpuTicks reads utime + stime of pid from /proc/<pid>/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sleepJob is a service job of count allocs, each one raw_exec task
// running /bin/sleep 3600 (with the least CPU a task may ask for, so that
// 1,000 fit on a 2-core node).
func sleepJob(id string, count int) string {
	return fmt.Sprintf(`job %q {
  type = "service"
  group "g" {
    count = %d
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 1
        memory = 10
      }
    }
  }
}
`, id, count)
}
