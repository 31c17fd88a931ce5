// Command servicelatency measures how soon native service discovery and
// templates follow what runs, on a -dev agent (issue 14's "how fast"):
//
//   - a service is listed by GET /v1/service/:name after its task starts
//     (the task's StartedAt to the first blocking-query answer holding
//     the allocation's instance);
//   - it is gone after its task stops (the task's FinishedAt to the first
//     answer without it);
//   - a template re-renders after a variable it reads changes (the PUT's
//     return to the rendered file holding the new value on disk; the
//     template has no wait).
//
// With -nomad it runs Nomad on the same work after drover.
//
//	go run ./bench/servicelatency -bin $PWD/bin/drover -nomad /tmp/latency-nomad/nomad
//
// Results go in docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

func main() {
	bin := flag.String("bin", "", "drover binary (drover-shim beside it); empty: build one")
	nomad := flag.String("nomad", "", "Nomad binary to compare with (optional)")
	count := flag.Int("count", 10, "allocations of the service job")
	changes := flag.Int("changes", 10, "variable changes to time")
	flag.Parse()
	if *bin == "" {
		dir, err := os.MkdirTemp("", "servicelatency-bin-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		if *bin, err = harness.Build(dir); err != nil {
			fatal(err)
		}
	}
	bins := [][2]string{{"drover", *bin}}
	if *nomad != "" {
		bins = append(bins, [2]string{"nomad", *nomad})
	}
	fmt.Printf("%d allocations with one service each; %d variable changes; load avg at start of each run in the last column\n\n", *count, *changes)
	fmt.Println("| binary | listed after start (p50 / max) | gone after stop (p50 / max) | template re-rendered after a change (p50 / max) | load avg |")
	fmt.Println("|---|---:|---:|---:|---|")
	for _, b := range bins {
		r, err := measure(b[0], b[1], *count, *changes)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", b[0], err))
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", b[0], r.listed, r.gone, r.rerender, r.load)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "servicelatency:", err)
	os.Exit(1)
}

type result struct {
	listed, gone, rerender summary
	load                   string
}

// summary is the median and the maximum of a set of durations.
type summary struct{ p50, max time.Duration }

func summarize(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	slices.Sort(ds)
	return summary{p50: ds[len(ds)/2], max: ds[len(ds)-1]}
}

func (s summary) String() string {
	return fmt.Sprintf("%d ms / %d ms", s.p50.Milliseconds(), s.max.Milliseconds())
}

const serviceJob = `job "lat" {
  group "g" {
    count = %d
    network {
      port "http" {}
    }
    service {
      name     = "lat"
      provider = "nomad"
      port     = "http"
    }
    task "s" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["100000003"]
      }
      resources {
        cpu    = 10
        memory = 10
      }
    }
  }
}
`

const templateJob = `job "tmpl" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data        = "{{ with nomadVar \"nomad/jobs/tmpl\" }}{{ .v }}{{ end }}\n"
        destination = "local/v.txt"
        change_mode = "noop"
      }
      config {
        command = "/bin/sleep"
        args    = ["100000004"]
      }
      resources {
        cpu    = 10
        memory = 10
      }
    }
  }
}
`

// watcher follows the instances of service "lat" with blocking queries and
// records when each allocation's instance was first and last seen.
type watcher struct {
	mu             sync.Mutex
	appeared, gone map[string]time.Time
	present        map[string]bool
}

func (w *watcher) run(c *api.Client, stop <-chan struct{}) {
	var index uint64
	for {
		select {
		case <-stop:
			return
		default:
		}
		regs, qm, err := c.Services().Get("lat", &api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Second})
		now := time.Now()
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		index = qm.LastIndex
		w.mu.Lock()
		seen := map[string]bool{}
		for _, r := range regs {
			seen[r.AllocID] = true
			if !w.present[r.AllocID] {
				w.present[r.AllocID] = true
				if _, ok := w.appeared[r.AllocID]; !ok {
					w.appeared[r.AllocID] = now
				}
			}
		}
		for id := range w.present {
			if !seen[id] {
				delete(w.present, id)
				w.gone[id] = now
			}
		}
		w.mu.Unlock()
	}
}

func measure(name, bin string, count, changes int) (res *result, err error) {
	root, err := os.MkdirTemp("", "servicelatency-"+name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	a, err := harness.NewDevAgent(bin, root, "bench-lat")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\nagent output:\n%s", err, a.LogTail(6000))
		}
		c := a.Client()
		for _, j := range []string{"lat", "tmpl"} {
			_, _, _ = c.Jobs().Deregister(j, true, nil)
		}
		if ierr := a.Interrupt(); ierr != nil && err == nil {
			err = ierr
		}
		a.KillLeftovers()
	}()
	if _, err := a.Start(); err != nil {
		return nil, err
	}
	if err := a.WaitReady(nil, 2*time.Minute); err != nil {
		return nil, err
	}
	c := a.Client()
	res = &result{load: harness.LoadAvg()}

	w := &watcher{appeared: map[string]time.Time{}, gone: map[string]time.Time{}, present: map[string]bool{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); w.run(c, stop) }()
	defer func() { close(stop); <-done }()

	if err := harness.RunJob(c, fmt.Sprintf(serviceJob, count)); err != nil {
		return nil, err
	}
	if err := a.Poll(3*time.Minute, 100*time.Millisecond, "every allocation running and listed", func() (bool, string) {
		ok, msg := harness.AllRunning(c, "lat", count)
		w.mu.Lock()
		n := len(w.appeared)
		w.mu.Unlock()
		return ok && n == count, fmt.Sprintf("%s, %d listed", msg, n)
	}); err != nil {
		return nil, err
	}
	allocs, _, err := c.Jobs().Allocations("lat", false, nil)
	if err != nil {
		return nil, err
	}
	var listed []time.Duration
	w.mu.Lock()
	for _, al := range allocs {
		if ts := al.TaskStates["s"]; ts != nil && !ts.StartedAt.IsZero() {
			listed = append(listed, w.appeared[al.ID].Sub(ts.StartedAt))
		}
	}
	w.mu.Unlock()
	res.listed = summarize(listed)

	if _, _, err := c.Jobs().Deregister("lat", false, nil); err != nil {
		return nil, err
	}
	if err := a.Poll(3*time.Minute, 100*time.Millisecond, "every instance gone and task stopped", func() (bool, string) {
		w.mu.Lock()
		n := len(w.gone)
		w.mu.Unlock()
		allocs, _, err := c.Jobs().Allocations("lat", false, nil)
		if err != nil {
			return false, err.Error()
		}
		finished := 0
		for _, al := range allocs {
			if ts := al.TaskStates["s"]; ts != nil && !ts.FinishedAt.IsZero() {
				finished++
			}
		}
		return n == count && finished == count, fmt.Sprintf("%d gone, %d tasks finished", n, finished)
	}); err != nil {
		return nil, err
	}
	allocs, _, err = c.Jobs().Allocations("lat", false, nil)
	if err != nil {
		return nil, err
	}
	var gone []time.Duration
	w.mu.Lock()
	for _, al := range allocs {
		if ts := al.TaskStates["s"]; ts != nil {
			gone = append(gone, w.gone[al.ID].Sub(ts.FinishedAt))
		}
	}
	w.mu.Unlock()
	res.gone = summarize(gone)

	// Templates: the variable first, so that the first render has it.
	put := func(v string) error {
		_, _, err := c.Variables().Put(&api.Variable{Path: "nomad/jobs/tmpl", Items: map[string]string{"v": v}}, false, 0, nil)
		return err
	}
	if err := put("v0"); err != nil {
		return nil, err
	}
	if err := harness.RunJob(c, templateJob); err != nil {
		return nil, err
	}
	file := func() string {
		for _, pat := range []string{"*/*/t/local/v.txt", "*/*/*/t/local/v.txt"} { // drover, Nomad
			if m, _ := filepath.Glob(filepath.Join(a.Dir, pat)); len(m) > 0 {
				return m[0]
			}
		}
		return ""
	}
	holds := func(v string) bool {
		f := file()
		if f == "" {
			return false
		}
		b, err := os.ReadFile(f)
		return err == nil && strings.TrimSpace(string(b)) == v
	}
	if err := a.Poll(3*time.Minute, 100*time.Millisecond, "the template rendered", func() (bool, string) {
		return holds("v0"), "not yet"
	}); err != nil {
		return nil, err
	}
	var rerender []time.Duration
	for i := 1; i <= changes; i++ {
		v := fmt.Sprintf("v%d", i)
		if err := put(v); err != nil {
			return nil, err
		}
		t0 := time.Now()
		for !holds(v) {
			if time.Since(t0) > time.Minute {
				return nil, fmt.Errorf("change %d not rendered after a minute", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		rerender = append(rerender, time.Since(t0))
		time.Sleep(200 * time.Millisecond) // let the watcher settle between changes
	}
	res.rerender = summarize(rerender)
	return res, nil
}
