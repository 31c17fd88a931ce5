// Command servicesmem measures what native service discovery costs an
// agent: a -dev agent (server and client in one process) holds 1,000
// registered Nomad services (10 allocations of a group with 100 service
// blocks) and 100 templates watching them (10 allocations of a task with
// 10 templates, each listing one service's instances), and the program
// reports the agent process's memory and CPU once everything runs and
// settled, then while one change of the services (a re-registration of
// every instance with a new tag) re-renders the templates. It runs drover
// and, with -nomad, Nomad on the same work, one after the other.
//
//	go run ./bench/servicesmem -bin /tmp/sm/drover -nomad /tmp/latency-nomad/nomad
//
// Results go in docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

type config struct {
	serviceAllocs, servicesPerAlloc  int
	templateAllocs, templatesPerTask int
	settle, window                   time.Duration
}

func main() {
	var cfg config
	bin := flag.String("bin", "", "drover binary (drover-shim beside it); empty: build one")
	nomad := flag.String("nomad", "", "Nomad binary to compare with (optional)")
	flag.IntVar(&cfg.serviceAllocs, "service-allocs", 10, "allocations of the services job")
	flag.IntVar(&cfg.servicesPerAlloc, "services", 100, "service blocks per allocation")
	flag.IntVar(&cfg.templateAllocs, "template-allocs", 10, "allocations of the templates job")
	flag.IntVar(&cfg.templatesPerTask, "templates", 10, "templates per task")
	flag.DurationVar(&cfg.settle, "settle", 20*time.Second, "wait after everything runs before measuring")
	flag.DurationVar(&cfg.window, "window", 30*time.Second, "CPU measurement window")
	flag.Parse()
	if *bin == "" {
		dir, err := os.MkdirTemp("", "servicesmem-bin-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		if *bin, err = harness.Build(dir); err != nil {
			fatal(err)
		}
	}
	bins := []struct{ name, path string }{{"drover", *bin}}
	if *nomad != "" {
		bins = append(bins, struct{ name, path string }{"nomad", *nomad})
	}
	fmt.Printf("%d registrations (%d allocs x %d services), %d templates (%d allocs x %d); settle %s, CPU window %s\n\n",
		cfg.serviceAllocs*cfg.servicesPerAlloc, cfg.serviceAllocs, cfg.servicesPerAlloc,
		cfg.templateAllocs*cfg.templatesPerTask, cfg.templateAllocs, cfg.templatesPerTask, cfg.settle, cfg.window)
	fmt.Println("| binary | RSS settled (MiB) | CPU settled (% of a core) | RSS after the change (MiB) | CPU during the change (core-seconds) | re-rendered within (s) | load avg |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for _, b := range bins {
		r, err := measure(cfg, b.name, b.path)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", b.name, err))
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.2f | %.1f | %s |\n", b.name, float64(r.rssSettled)/1024, r.cpuSettled*100,
			float64(r.rssChanged)/1024, r.cpuChange, r.rerender.Seconds(), r.load)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "servicesmem:", err)
	os.Exit(1)
}

type result struct {
	rssSettled, rssChanged int64   // KiB
	cpuSettled             float64 // cores
	cpuChange              float64 // core-seconds from the change until every template re-rendered
	rerender               time.Duration
	load                   string
}

// servicesJob registers per alloc n services svc-0..svc-(n-1) on the
// group's port, tagged tag.
func servicesJob(cfg config, tag string) string {
	var b strings.Builder
	// Every allocation updated at once (Nomad applies in-place updates
	// at once; drover rolls a service change max_parallel at a time).
	fmt.Fprintf(&b, "job \"svcs\" {\n  group \"g\" {\n    count = %d\n    update {\n      max_parallel = %d\n    }\n    network {\n      port \"http\" {}\n    }\n", cfg.serviceAllocs, cfg.serviceAllocs)
	for i := range cfg.servicesPerAlloc {
		fmt.Fprintf(&b, "    service {\n      name     = \"svc-%d\"\n      provider = \"nomad\"\n      port     = \"http\"\n      tags     = [%q]\n    }\n", i, tag)
	}
	b.WriteString(sleepTask("100000001"))
	b.WriteString("  }\n}\n")
	return b.String()
}

// templatesJob's task renders m templates; template i lists the instances
// of service svc-i with their tags.
func templatesJob(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job \"tmpls\" {\n  group \"g\" {\n    count = %d\n    task \"t\" {\n      driver = \"raw_exec\"\n", cfg.templateAllocs)
	for i := range cfg.templatesPerTask {
		fmt.Fprintf(&b, "      template {\n        data = <<EOF\n{{ range nomadService \"svc-%d\" }}{{ .Address }}:{{ .Port }} {{ range .Tags }}{{ . }}{{ end }}\n{{ end }}\nEOF\n        destination = \"local/svc-%d.txt\"\n        change_mode = \"noop\"\n      }\n", i, i)
	}
	b.WriteString("      config {\n        command = \"/bin/sleep\"\n        args    = [\"100000002\"]\n      }\n      resources {\n        cpu    = 1\n        memory = 10\n      }\n    }\n  }\n}\n")
	return b.String()
}

func sleepTask(marker string) string {
	return fmt.Sprintf("    task \"s\" {\n      driver = \"raw_exec\"\n      config {\n        command = \"/bin/sleep\"\n        args    = [%q]\n      }\n      resources {\n        cpu    = 1\n        memory = 10\n      }\n    }\n", marker)
}

func measure(cfg config, name, bin string) (res *result, err error) {
	root, err := os.MkdirTemp("", "servicesmem-"+name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	a, err := harness.NewDevAgent(bin, root, "bench-svc")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\nagent output:\n%s", err, a.LogTail(6000))
		}
		c := a.Client()
		for _, j := range []string{"svcs", "tmpls"} {
			_, _, _ = c.Jobs().Deregister(j, true, nil)
		}
		_ = a.Poll(time.Minute, 200*time.Millisecond, "the tasks to stop", func() (bool, string) {
			n := tasksLeft()
			return n == 0, fmt.Sprintf("%d tasks left", n)
		})
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
	if err := harness.RunJob(c, servicesJob(cfg, "v1")); err != nil {
		return nil, err
	}
	if err := a.Poll(5*time.Minute, 500*time.Millisecond, "every service registered", registered(c, cfg, "v1")); err != nil {
		return nil, err
	}
	if err := harness.RunJob(c, templatesJob(cfg)); err != nil {
		return nil, err
	}
	tmplDirs := func() []string {
		dirs, _ := filepath.Glob(filepath.Join(a.Dir, "*", "*", "t", "local")) // Nomad: data/alloc/<id>/t/local
		more, _ := filepath.Glob(filepath.Join(a.Dir, "*", "*", "*", "t", "local"))
		return append(dirs, more...)
	}
	if err := a.Poll(5*time.Minute, 500*time.Millisecond, "every template rendered", rendered(cfg, tmplDirs, "v1")); err != nil {
		return nil, err
	}
	time.Sleep(cfg.settle)
	res = &result{load: harness.LoadAvg()}
	cpu0, err := cpuSeconds(a.PID())
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	time.Sleep(cfg.window)
	cpu1, err := cpuSeconds(a.PID())
	if err != nil {
		return nil, err
	}
	res.cpuSettled = (cpu1 - cpu0) / time.Since(t0).Seconds()
	m, err := harness.ReadMem(a.PID())
	if err != nil {
		return nil, err
	}
	res.rssSettled = m.RSS

	// The change: every instance re-registered with a new tag.
	t1 := time.Now()
	if err := harness.RunJob(c, servicesJob(cfg, "v2")); err != nil {
		return nil, err
	}
	if err := a.Poll(5*time.Minute, 100*time.Millisecond, "every template re-rendered", rendered(cfg, tmplDirs, "v2")); err != nil {
		return nil, err
	}
	res.rerender = time.Since(t1)
	cpu2, err := cpuSeconds(a.PID())
	if err != nil {
		return nil, err
	}
	res.cpuChange = cpu2 - cpu1
	if m, err = harness.ReadMem(a.PID()); err != nil {
		return nil, err
	}
	res.rssChanged = m.RSS
	return res, nil
}

// registered reports whether every service lists every allocation's
// instance tagged tag.
func registered(c *api.Client, cfg config, tag string) func() (bool, string) {
	return func() (bool, string) {
		for _, i := range []int{0, cfg.servicesPerAlloc - 1} {
			regs, _, err := c.Services().Get("svc-"+strconv.Itoa(i), nil)
			if err != nil {
				return false, err.Error()
			}
			n := 0
			for _, r := range regs {
				if len(r.Tags) == 1 && r.Tags[0] == tag {
					n++
				}
			}
			if n != cfg.serviceAllocs {
				return false, fmt.Sprintf("svc-%d: %d of %d instances tagged %s", i, n, cfg.serviceAllocs, tag)
			}
		}
		return true, ""
	}
}

// rendered reports whether every template file of every allocation lists
// every instance tagged tag.
func rendered(cfg config, dirs func() []string, tag string) func() (bool, string) {
	return func() (bool, string) {
		ds := dirs()
		if len(ds) < cfg.templateAllocs {
			return false, fmt.Sprintf("%d of %d template task dirs", len(ds), cfg.templateAllocs)
		}
		for _, d := range ds {
			for i := range cfg.templatesPerTask {
				b, err := os.ReadFile(filepath.Join(d, fmt.Sprintf("svc-%d.txt", i)))
				if err != nil {
					return false, err.Error()
				}
				if n := strings.Count(string(b), " "+tag+"\n"); n != cfg.serviceAllocs {
					return false, fmt.Sprintf("%s/svc-%d.txt: %d of %d instances tagged %s", d, i, n, cfg.serviceAllocs, tag)
				}
			}
		}
		return true, ""
	}
}

// cpuSeconds is the user and system CPU time pid used so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the
	// command; in clock ticks of 1/100 s (CLK_TCK on linux/amd64).
	ut, err1 := strconv.ParseFloat(fields[11], 64)
	st, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid %d: malformed stat", pid)
	}
	return (ut + st) / 100, nil
}

// tasksLeft counts the benchmark's task processes still running.
func tasksLeft() int {
	out, _ := exec.Command("pgrep", "-f", "^/bin/sleep 10000000[12]$").Output()
	return len(strings.Fields(string(out)))
}
