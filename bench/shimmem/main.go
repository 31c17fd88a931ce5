// Command shimmem measures the memory of one raw_exec task shim: RSS, PSS,
// private dirty and anonymous memory from /proc/<pid>/smaps_rollup.
//
// It builds the drover binary (or takes -bin), starts a persistent agent
// (`drover agent -config`, data dir in a temporary directory), runs a job
// with one raw_exec task (sh writing its pid, then exec sleep), waits
// -settle, samples the shim -samples times a second apart and prints the
// last sample, then stops the job and checks that the shim is gone. With
// one shim on the machine, its PSS counts the binary's shared pages it
// maps in full unless other drover processes (the agent) map them too.
// Usage (from the repository root):
//
//	go run ./bench/shimmem
//
// Where it sits in the data flow: outside the agent, watching the shim a
// driver starts (drivers/shared/shim).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/drover-io/drover/bench/internal/harness"
)

func main() {
	bin := flag.String("bin", "", "the drover binary (default: go build ./cmd/drover)")
	settle := flag.Duration("settle", 5*time.Second, "wait after the task started before sampling")
	samples := flag.Int("samples", 3, "samples, a second apart")
	flag.Parse()
	if err := run(*bin, *settle, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "shimmem:", err)
		os.Exit(1)
	}
}

func run(bin string, settle time.Duration, samples int) (err error) {
	root, err := os.MkdirTemp("", "drover-bench-shimmem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if bin == "" {
		if bin, err = harness.Build(root); err != nil {
			return err
		}
	}
	a, err := harness.NewAgent(bin, root, "bench-shimmem", harness.Combined)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fmt.Fprintf(os.Stderr, "agent output:\n%s\n", a.Log())
		}
		_ = a.Interrupt()
		a.KillLeftovers()
	}()
	fmt.Printf("machine: %s/%s, %d CPUs (runtime.NumCPU)\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if st, err := os.Stat(bin); err == nil {
		fmt.Printf("binary: %s MiB\n", fmt.Sprintf("%.1f", float64(st.Size())/(1<<20)))
	}
	if _, err := a.Start(); err != nil {
		return err
	}
	if err := a.WaitReady(nil, 2*time.Minute); err != nil {
		return err
	}
	c := a.Client()
	const jobID = "bench-shimmem"
	if err := harness.RunJob(c, harness.SleepJob(jobID, 1)); err != nil {
		return err
	}
	if err := a.Poll(2*time.Minute, 100*time.Millisecond, "the alloc running", func() (bool, string) {
		return harness.AllRunning(c, jobID, 1)
	}); err != nil {
		return err
	}
	t, err := harness.ScanTree(a.Dir)
	if err != nil {
		return err
	}
	if len(t.Shims) != 1 || len(t.Tasks) != 1 {
		return fmt.Errorf("%d shims and %d tasks run, want 1 each", len(t.Shims), len(t.Tasks))
	}
	var shim, task int
	for s := range t.Shims {
		shim = s
	}
	for p := range t.Tasks {
		task = p
	}
	time.Sleep(settle)
	var m harness.Mem
	for i := range samples {
		if i > 0 {
			time.Sleep(time.Second)
		}
		if m, err = harness.ReadMem(shim); err != nil {
			return err
		}
		fmt.Printf("sample %d: shim RSS %s, PSS %s, private dirty %s, anonymous %s\n", i+1,
			harness.MiB(m.RSS), harness.MiB(m.PSS), harness.MiB(m.PrivateDirty), harness.MiB(m.Anonymous))
	}
	tm, err := harness.ReadMem(task)
	if err != nil {
		return err
	}
	am, err := harness.ReadMem(a.PID())
	if err != nil {
		return err
	}
	fmt.Printf("\none shim (pid %d), %s after its task started:\n", shim, settle)
	fmt.Printf("  RSS %s, PSS %s, private dirty %s, anonymous %s\n",
		harness.MiB(m.RSS), harness.MiB(m.PSS), harness.MiB(m.PrivateDirty), harness.MiB(m.Anonymous))
	fmt.Printf("  for scale: its task (sleep) RSS %s; the agent RSS %s, PSS %s\n",
		harness.MiB(tm.RSS), harness.MiB(am.RSS), harness.MiB(am.PSS))

	if _, _, err := c.Jobs().Deregister(jobID, false, nil); err != nil {
		return fmt.Errorf("stop job: %w", err)
	}
	return a.Poll(2*time.Minute, 100*time.Millisecond, "the shim and task to be gone", func() (bool, string) {
		return !harness.Alive(shim) && !harness.Alive(task), "still running"
	})
}
