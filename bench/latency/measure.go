package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

// jobID is the benchmark's job; group is its only task group.
const (
	jobID = "bench-latency"
	group = "g"
	task  = "t"
)

// result is one measurement: n allocs of one binary on a fresh agent.
type result struct {
	n    int
	load string // 1-minute load average just before the register
	// first and all: from just before the register request until the
	// API counts one, then n, allocs running.
	first, all time.Duration
	// stopAPI and stopProcs: from just before the stop request until the
	// API counts n allocs complete, and until no task process is left;
	// -1 when not measured.
	stopAPI, stopProcs time.Duration
	// tasks is how many task processes ran when all were running.
	tasks int
	rss   harness.Mem // the agent's, with the n tasks running
	// steps are where the time went, from the API and, for drover, the
	// allocations' timelines; stopSteps, of the stop, from the API.
	steps, stopSteps []stepStat
}

// sleepJob is a service job of count allocs, each one raw_exec task
// running /bin/sleep marker (a number no other process on the machine
// sleeps, to find the tasks by their command line). Small resources, so
// that 1,000 fit on a small node.
func sleepJob(count int, marker string) string {
	return fmt.Sprintf(`job %q {
  type = "service"

  group %q {
    count = %d

    restart {
      attempts = 0
      mode     = "fail"
    }

    task %q {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = [%q]
      }

      resources {
        cpu    = 1
        memory = 10
      }
    }
  }
}
`, jobID, group, count, task, marker)
}

// measure starts an agent of b under root, runs and stops a job of n
// allocs, and stops the agent.
func measure(cfg config, b binary, n int, root string) (res *result, err error) {
	var a *harness.Agent
	if cfg.persistent {
		a, err = harness.NewAgent(b.path, root, "bench-latency", harness.Combined)
	} else {
		a, err = harness.NewDevAgent(b.path, root, "bench-latency")
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			log := a.Log()
			if len(log) > 8000 {
				log = "...\n" + log[len(log)-8000:]
			}
			err = fmt.Errorf("%w\nagent output:\n%s", err, log)
		}
		if ierr := a.Interrupt(); ierr != nil && err == nil {
			err = ierr
		}
		if k := a.KillLeftovers(); k > 0 {
			fmt.Fprintf(os.Stderr, "killed %d leftover shims\n", k)
		}
	}()
	if _, err := a.Start(); err != nil {
		return nil, err
	}
	if err := a.WaitReady(nil, 2*time.Minute); err != nil {
		return nil, err
	}
	c := a.Client()
	marker := strconv.Itoa(9_000_000 + rand.IntN(1_000_000))
	job, err := c.Jobs().ParseHCL(sleepJob(n, marker), true)
	if err != nil {
		return nil, fmt.Errorf("parse job: %w", err)
	}
	res = &result{n: n, load: harness.LoadAvg(), stopAPI: -1, stopProcs: -1}
	timeout := 2*time.Minute + time.Duration(n)*200*time.Millisecond

	t0 := time.Now()
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return nil, fmt.Errorf("register job: %w", err)
	}
	res.first = -1
	err = watchSummary(a, c, t0.Add(timeout), func(at time.Time, s api.TaskGroupSummary) (bool, error) {
		if s.Failed > 0 || s.Lost > 0 {
			return false, fmt.Errorf("%d allocs failed, %d lost", s.Failed, s.Lost)
		}
		if res.first < 0 && s.Running > 0 {
			res.first = at.Sub(t0)
		}
		return s.Running >= n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %d allocs running: %w", n, err)
	}
	res.all = time.Since(t0)

	pids, err := taskPids(marker)
	if err != nil {
		return nil, err
	}
	res.tasks = len(pids)
	if res.steps, err = breakdown(c, t0); err != nil {
		return nil, err
	}
	time.Sleep(cfg.settle)
	if res.rss, err = harness.ReadMem(a.PID()); err != nil {
		return nil, err
	}
	if !cfg.stop {
		return res, nil
	}

	gone := make(chan time.Duration, 1)
	t1 := time.Now()
	go func() { gone <- waitGone(pids, t1, t1.Add(timeout)) }()
	if _, _, err := c.Jobs().Deregister(jobID, false, nil); err != nil {
		return nil, fmt.Errorf("stop job: %w", err)
	}
	err = watchSummary(a, c, t1.Add(timeout), func(at time.Time, s api.TaskGroupSummary) (bool, error) {
		return s.Complete+s.Failed+s.Lost >= n && s.Running == 0 && s.Starting == 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %d allocs stopped: %w", n, err)
	}
	res.stopAPI = time.Since(t1)
	res.stopProcs = <-gone
	if res.stopSteps, err = stopBreakdown(c, t1); err != nil {
		return nil, err
	}
	return res, nil
}

// watchSummary runs blocking queries of the job's summary until done
// reports true or an error, the agent exits, or deadline passes; done is
// given the time each answer arrived and the group's counts.
func watchSummary(a *harness.Agent, c *api.Client, deadline time.Time, done func(time.Time, api.TaskGroupSummary) (bool, error)) error {
	var index uint64
	for {
		if a.Exited() {
			return errors.New("the agent exited")
		}
		s, meta, err := c.Jobs().Summary(jobID, &api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Second})
		at := time.Now()
		if err != nil {
			if at.After(deadline) {
				return err
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		ok, err := done(at, s.Summary[group])
		if err != nil || ok {
			return err
		}
		if at.After(deadline) {
			return fmt.Errorf("timed out; last counts %+v", s.Summary[group])
		}
		index = meta.LastIndex
	}
}

// taskPids returns the pids of the processes running /bin/sleep marker.
func taskPids(marker string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if len(args) == 2 && strings.HasSuffix(args[0], "sleep") && args[1] == marker {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// waitGone waits until none of pids is alive (or a zombie not yet
// reaped), polling every 2ms, and returns the time since t0; -1 past
// deadline.
func waitGone(pids []int, t0, deadline time.Time) time.Duration {
	left := pids
	for len(left) > 0 {
		if time.Now().After(deadline) {
			return -1
		}
		var still []int
		for _, pid := range left {
			if syscall.Kill(pid, 0) == nil {
				still = append(still, pid)
			}
		}
		left = still
		if len(left) > 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return time.Since(t0)
}

// measureFloor starts n /bin/sleep processes one after another and
// returns how long that took (each Start returns once the exec succeeded);
// then it kills them.
func measureFloor(n int) (time.Duration, error) {
	cmds := make([]*exec.Cmd, 0, n)
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	t0 := time.Now()
	for range n {
		c := exec.Command("/bin/sleep", "1000000")
		if err := c.Start(); err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		cmds = append(cmds, c)
	}
	return time.Since(t0), nil
}

// runOutput runs a command and returns its combined output.
func runOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
