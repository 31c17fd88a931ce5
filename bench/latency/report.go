package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/bench/internal/harness"
)

// stepStat is one step's time after the register request, over the
// allocations that recorded it.
type stepStat struct {
	name        string
	median, max time.Duration
	count       int
}

// Steps read from the API (drover and Nomad alike), in order.
const (
	stepPlaced   = "api: alloc created (CreateTime)"
	stepReceived = "api: task event Received"
	stepSetup    = "api: task event Task Setup"
	stepStarted  = "api: task event Started"
)

// stopEvents are the task events of a stop, in order, and their steps.
var stopEvents = []struct{ event, step string }{
	{"Killing", "api: task event Killing"},
	{"Terminated", "api: task event Terminated"},
	{"Killed", "api: task event Killed"},
}

// stopBreakdown reads the job's allocations after a stop requested at t0
// and returns the stop events' times after t0.
func stopBreakdown(c *api.Client, t0 time.Time) ([]stepStat, error) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil, fmt.Errorf("list allocs: %w", err)
	}
	at := map[string][]time.Duration{}
	for _, al := range allocs {
		ts := al.TaskStates[task]
		if ts == nil {
			continue
		}
		for _, want := range stopEvents {
			// The last one: a task restarted before has older ones.
			for i := len(ts.Events) - 1; i >= 0; i-- {
				if e := ts.Events[i]; e.Type == want.event {
					at[want.step] = append(at[want.step], time.Unix(0, e.Time).Sub(t0))
					break
				}
			}
		}
	}
	order := make([]string, 0, len(stopEvents)+len(stopTimelineSteps))
	for _, want := range stopEvents {
		order = append(order, want.step)
	}
	for i, al := range allocs {
		tl, err := c.Allocations().Timeline(al.ID)
		if err != nil {
			if i == 0 && api.IsNotFound(err) {
				break // the agent serves no timelines (Nomad)
			}
			return nil, fmt.Errorf("timeline of alloc %s: %w", al.ID, err)
		}
		for _, s := range tl.Steps {
			if slices.Contains(stopTimelineSteps, s.Name) {
				at["timeline: "+s.Name] = append(at["timeline: "+s.Name], time.Unix(0, s.Time).Sub(t0))
			}
		}
	}
	for _, name := range stopTimelineSteps {
		order = append(order, "timeline: "+name)
	}
	var out []stepStat
	for _, step := range order {
		if d := at[step]; len(d) > 0 {
			slices.Sort(d)
			out = append(out, stepStat{name: step, median: d[len(d)/2], max: d[len(d)-1], count: len(d)})
		}
	}
	return out, nil
}

// stopTimelineSteps are the timeline's steps of a stop.
var stopTimelineSteps = []string{"stop_received", "ended", "ended_applied"}

// breakdown reads the job's allocations and, where the agent serves them,
// their timelines, and returns each step's time after t0.
func breakdown(c *api.Client, t0 time.Time) ([]stepStat, error) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil, fmt.Errorf("list allocs: %w", err)
	}
	var order []string
	at := map[string][]time.Duration{}
	add := func(step string, unixNano int64) {
		if unixNano <= 0 {
			return
		}
		if _, ok := at[step]; !ok {
			order = append(order, step)
		}
		at[step] = append(at[step], time.Unix(0, unixNano).Sub(t0))
	}
	for _, step := range []string{stepPlaced, stepReceived, stepSetup, stepStarted} {
		at[step] = nil
		order = append(order, step)
	}
	for _, al := range allocs {
		add(stepPlaced, al.CreateTime)
		if ts := al.TaskStates[task]; ts != nil {
			for _, want := range []struct{ event, step string }{{"Received", stepReceived}, {"Task Setup", stepSetup}, {"Started", stepStarted}} {
				for _, e := range ts.Events {
					if e.Type == want.event {
						add(want.step, e.Time)
						break
					}
				}
			}
		}
	}
	for i, al := range allocs {
		tl, err := c.Allocations().Timeline(al.ID)
		if err != nil {
			if i == 0 && api.IsNotFound(err) {
				break // the agent serves no timelines (Nomad)
			}
			return nil, fmt.Errorf("timeline of alloc %s: %w", al.ID, err)
		}
		for _, s := range tl.Steps {
			if !slices.Contains(stopTimelineSteps, s.Name) {
				add("timeline: "+s.Name, s.Time)
			}
		}
	}
	var out []stepStat
	for _, step := range order {
		d := at[step]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		out = append(out, stepStat{name: step, median: d[len(d)/2], max: d[len(d)-1], count: len(d)})
	}
	return out, nil
}

// print writes one run's result.
func (r *result) print(bin string, run int, steps bool) {
	fmt.Printf("-- %s run %d (load %s): first running %s, all %d running %s (%d task processes)",
		bin, run, r.load, ms(r.first), r.n, ms(r.all), r.tasks)
	if r.stopAPI >= 0 {
		fmt.Printf("; stop: API %s, processes gone %s", ms(r.stopAPI), ms(r.stopProcs))
	}
	fmt.Printf("; agent RSS %s\n", harness.MiB(r.rss.RSS))
	if !steps {
		return
	}
	printSteps("step (time after the register request)", r.steps)
	printSteps("stop step (time after the stop request)", r.stopSteps)
}

func printSteps(title string, steps []stepStat) {
	if len(steps) == 0 {
		return
	}
	fmt.Printf("   %-50s %10s %10s %6s\n", title, "median", "max", "allocs")
	for _, s := range steps {
		fmt.Printf("   %-50s %10s %10s %6d\n", s.name, ms(s.median), ms(s.max), s.count)
	}
}

// summaryRow collects the runs of one binary and count.
type summaryRow struct {
	bin                            string
	n                              int
	floor                          time.Duration
	first, all, stopAPI, stopProcs []time.Duration
	rss                            []int64
	loads                          []string
}

func (s *summaryRow) add(r *result) {
	s.first = append(s.first, r.first)
	s.all = append(s.all, r.all)
	if r.stopAPI >= 0 {
		s.stopAPI = append(s.stopAPI, r.stopAPI)
		s.stopProcs = append(s.stopProcs, r.stopProcs)
	}
	s.rss = append(s.rss, r.rss.RSS)
	s.loads = append(s.loads, r.load)
}

// span formats the range of ds: "min – max" (one value alone).
func span(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	if lo == hi {
		return fmt.Sprintf("%.3f", lo.Seconds())
	}
	return fmt.Sprintf("%.3f–%.3f", lo.Seconds(), hi.Seconds())
}

func printSummary(rows []summaryRow) {
	fmt.Printf("\nsummary (seconds after the register or stop request; min–max over runs):\n\n")
	fmt.Println("| binary | allocs | first running | all running | stop: API | stop: processes gone | agent RSS (MiB) | load avg | floor |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---|---:|")
	for _, r := range rows {
		rss := make([]string, len(r.rss))
		for i, v := range r.rss {
			rss[i] = fmt.Sprintf("%.0f", float64(v)/1024)
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %.3f |\n", r.bin, r.n, span(r.first), span(r.all),
			span(r.stopAPI), span(r.stopProcs), strings.Join(rss, ", "), strings.Join(r.loads, ", "), r.floor.Seconds())
	}
}
