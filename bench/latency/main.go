// Command latency measures how long allocations take to run after their
// job is registered, and to stop after it is stopped, on one node, for
// drover and, in the same run, for any other agent that speaks Nomad's
// HTTP API (a Nomad binary).
//
// For each count n and each binary it starts a fresh agent (-dev by
// default: server and client in one process, state in memory; with
// -persistent an agent with a data dir, raft and client state on disk),
// registers a service job of n allocations, each one raw_exec task running
// /bin/sleep, through the HTTP API, and times from just before the
// register request:
//
//   - first: the job summary (a blocking query) counts one alloc running;
//   - all: it counts n running;
//   - stop: after the job is stopped (deregistered), the summary counts
//     n allocs complete, and every task process is gone.
//
// It also samples the agent's RSS with the n tasks running, and prints
// where the time went: from the API (the alloc's creation by the
// scheduler and its task's Received, Task Setup and Started events), for
// every binary; and, from drover, the allocation's timeline (GET
// /v1/client/allocation/<id>/timeline), each step's time after register
// (median and max over the allocs). The floor is n /bin/sleep processes
// started directly by this program, one after another.
//
// Usage (from the repository root):
//
//	go run ./bench/latency -n 1,10,100 -runs 3
//	go run ./bench/latency -n 1,10,100 -runs 3 -nomad /path/to/nomad
//	go run ./bench/latency -n 100 -baseline /path/to/older/drover
//	go run ./bench/latency -n 1000 -runs 1
//	go run ./bench/latency -n 100 -persistent
//
// Where it sits in the data flow: outside the agent, like a user's
// script: it sees only the HTTP API and the processes.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/bench/internal/harness"
)

func main() {
	counts := flag.String("n", "1,10,100", "comma-separated allocation counts")
	runs := flag.Int("runs", 3, "runs per count and binary")
	bin := flag.String("bin", "", "the drover binary (default: go build ./cmd/drover)")
	nomad := flag.String("nomad", "", "a Nomad binary to measure in the same run (optional)")
	baseline := flag.String("baseline", "", "another drover binary (an older build) to measure in the same run (optional)")
	nomadMax := flag.Int("nomad-max", 100, "the largest count run with -nomad (Nomad runs an executor process per task)")
	persistent := flag.Bool("persistent", false, "run agents with a data dir (raft and client state on disk) instead of -dev")
	settle := flag.Duration("settle", time.Second, "wait after all allocs run before sampling the agent's memory")
	stop := flag.Bool("stop", true, "also time the job's stop")
	keep := flag.Bool("keep", false, "keep the temporary directory (agent logs)")
	steps := flag.Bool("steps", true, "print the per-step breakdown of each run")
	flag.Parse()
	ns, err := parseCounts(*counts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(2)
	}
	cfg := config{runs: *runs, persistent: *persistent, settle: *settle, stop: *stop, keep: *keep, steps: *steps}
	if err := run(cfg, ns, *bin, *baseline, *nomad, *nomadMax); err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(1)
	}
}

// config is what every measurement shares.
type config struct {
	runs       int
	persistent bool
	settle     time.Duration
	stop       bool
	keep       bool
	steps      bool
}

func parseCounts(s string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-n: %q is not a positive count", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// binary is one agent binary under test.
type binary struct {
	name, path string
	max        int // the largest count to run it with; 0: no limit
}

func run(cfg config, ns []int, bin, baseline, nomad string, nomadMax int) error {
	root, err := os.MkdirTemp("", "drover-bench-latency-")
	if err != nil {
		return err
	}
	if cfg.keep {
		fmt.Println("temporary directory:", root)
	} else {
		defer os.RemoveAll(root)
	}
	if bin == "" {
		if bin, err = harness.Build(root); err != nil {
			return err
		}
	}
	bins := []binary{{name: "drover", path: bin}}
	if baseline != "" {
		bins = append(bins, binary{name: "baseline", path: baseline})
	}
	if nomad != "" {
		bins = append(bins, binary{name: "nomad", path: nomad, max: nomadMax})
	}
	mode := "-dev"
	if cfg.persistent {
		mode = "persistent (data_dir)"
	}
	fmt.Printf("machine: %s/%s, %d CPUs; agents: %s; runs per count: %d\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), mode, cfg.runs)
	for _, b := range bins {
		fmt.Printf("%s: %s (%s)\n", b.name, b.path, versionOf(b.path))
	}

	var summary []summaryRow
	seq := 0
	for _, n := range ns {
		floor, err := measureFloor(n)
		if err != nil {
			return err
		}
		fmt.Printf("\n== %d allocation(s); floor (%d sleep processes started directly): %s\n", n, n, ms(floor))
		for _, b := range bins {
			if b.max > 0 && n > b.max {
				fmt.Printf("-- %s: skipped (count above -nomad-max %d)\n", b.name, b.max)
				continue
			}
			row := summaryRow{bin: b.name, n: n, floor: floor}
			for r := 1; r <= cfg.runs; r++ {
				seq++
				res, err := measure(cfg, b, n, fmt.Sprintf("%s/run-%d", root, seq))
				if err != nil {
					return fmt.Errorf("%s, %d allocs, run %d: %w", b.name, n, r, err)
				}
				res.print(b.name, r, cfg.steps)
				row.add(res)
			}
			summary = append(summary, row)
		}
	}
	printSummary(summary)
	return nil
}

// versionOf returns the first line of `<bin> version`.
func versionOf(bin string) string {
	out, err := runOutput(bin, "version")
	if err != nil {
		return "version unknown: " + err.Error()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return line
}

// ms formats a duration in seconds with 3 decimals.
func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}
