// Command exec measures the round trip of `alloc exec` on loopback: the
// time from opening an exec session to having the command's output and
// exit code, for a command that prints one line (`echo hi`) in a running
// task.
//
// It builds the drover binary (or takes -bin), starts a -dev agent on free
// loopback ports, runs one allocation of a service job whose task sleeps
// (-driver raw_exec or exec), and then runs -n execs one after the other
// through the Go API client: each opens the WebSocket
// (/v1/client/allocation/:id/exec), the agent starts the command in the
// task through its driver (raw_exec: a process of the task's user and
// environment; exec: inside the task's namespaces, chroot and cgroup),
// the output and the exit frame come back, and the session closes. It
// checks every exec's output and exit code, and prints the distribution
// of the round trips (after -warmup execs that are not counted).
// Usage (from the repository root, as root for -driver exec):
//
//	go run ./bench/exec -n 200
//	go run ./bench/exec -n 200 -driver exec
//
// Where it sits in the data flow: outside the agent, at the HTTP API the
// CLI's `alloc exec` uses (httpapi/exec.go, client.ExecAlloc, the driver's
// ExecTaskStreaming).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

// jobID is the benchmark's job.
const jobID = "bench-exec"

func main() {
	n := flag.Int("n", 200, "execs measured")
	warmup := flag.Int("warmup", 10, "execs before the measured ones (not counted)")
	bin := flag.String("bin", "", "the drover binary (default: go build ./cmd/drover)")
	driver := flag.String("driver", "raw_exec", "the task's driver: raw_exec or exec")
	keep := flag.Bool("keep", false, "keep the temporary directory (agent log, data dir)")
	flag.Parse()
	if *driver != "raw_exec" && *driver != "exec" {
		fmt.Fprintf(os.Stderr, "exec: -driver %q: use raw_exec or exec\n", *driver)
		os.Exit(2)
	}
	if err := run(*n, *warmup, *bin, *driver, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "exec:", err)
		os.Exit(1)
	}
}

func run(n, warmup int, bin, driver string, keep bool) (err error) {
	root, err := os.MkdirTemp("", "drover-bench-exec-")
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
	a, err := harness.NewDevAgent(bin, root, "bench-exec")
	if err != nil {
		return err
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
	fmt.Printf("machine: %s/%s, %d CPUs (runtime.NumCPU); driver %s; n = %d\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), driver, n)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at start: %s", b)
	}
	if _, err := a.Start(); err != nil {
		return err
	}
	c := a.Client()
	if err := a.WaitReady(c, 2*time.Minute); err != nil {
		return err
	}
	job := harness.SleepJob(jobID, 1)
	if driver == "exec" {
		job = strings.Replace(job, `driver = "raw_exec"`, `driver = "exec"`, 1)
	}
	if err := harness.RunJob(c, job); err != nil {
		return err
	}
	if err := a.Poll(5*time.Minute, 100*time.Millisecond, "the alloc running", func() (bool, string) {
		return harness.AllRunning(c, jobID, 1)
	}); err != nil {
		return err
	}
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil || len(allocs) != 1 {
		return fmt.Errorf("the job's allocation: %v (%d allocs)", err, len(allocs))
	}
	allocID := allocs[0].ID

	var times []time.Duration
	var cpuStart time.Duration
	for i := range warmup + n {
		if i == warmup {
			if cpuStart, err = agentCPU(a.PID()); err != nil {
				return err
			}
		}
		d, err := execOnce(c, allocID)
		if err != nil {
			return fmt.Errorf("exec %d: %w", i+1, err)
		}
		if i >= warmup {
			times = append(times, d)
		}
	}
	cpuEnd, err := agentCPU(a.PID())
	if err != nil {
		return err
	}
	slices.Sort(times)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	q := func(p float64) time.Duration { return times[min(len(times)-1, int(p*float64(len(times))))] }
	fmt.Printf("alloc exec round trip (echo hi), %d execs after %d warm-up ones:\n", len(times), warmup)
	fmt.Printf("  min %v  p50 %v  p90 %v  p99 %v  max %v  mean %v\n",
		ms(times[0]), ms(q(0.5)), ms(q(0.9)), ms(q(0.99)), ms(times[len(times)-1]), ms(sum/time.Duration(len(times))))
	fmt.Printf("  CPU per exec, the agent's and its reaped children's (the init stage, the command): %v\n",
		ms((cpuEnd-cpuStart)/time.Duration(len(times))))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at end: %s", b)
	}
	return nil
}

// execOnce runs `echo hi` in the allocation's task and returns the round
// trip, checking the output and the exit code.
func execOnce(c *api.Client, allocID string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code, err := c.Allocations().Exec(ctx, allocID, &api.ExecRequest{Task: "t", Command: []string{"echo", "hi"},
		Stdout: &stdout, Stderr: &stderr}, nil)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if code != 0 || stdout.String() != "hi\n" {
		return 0, fmt.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout.String(), stderr.String(), "hi\n")
	}
	return d, nil
}

// agentCPU returns the CPU time the agent has used, user and system,
// with that of its children it has waited for (/proc/<pid>/stat fields
// 14 to 17): the CPU time a load spreads out over the wall clock. It
// counts in clock ticks, so divide a difference over many execs.
func agentCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("agent CPU time: %w", err)
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if i < 0 || len(f) < 15 {
		return 0, fmt.Errorf("agent CPU time: malformed /proc/%d/stat", pid)
	}
	var ticks int64
	for _, s := range f[14-3 : 17-3+1] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("agent CPU time: /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	const clockTicks = 100 // USER_HZ, which Linux exports as 100 on every architecture
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// ms prints d in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
