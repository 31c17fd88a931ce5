package command

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"

	"github.com/drover-io/drover/api"
)

// isTemplateJob reports whether a job is a periodic or parameterized
// parent, which `job status` shows with its children instead of
// allocations.
func isTemplateJob(j *api.Job) bool {
	return j.Periodic != nil || (j.ParameterizedJob != nil && !j.Dispatched)
}

// nextPeriodicLaunch is the earliest time after now any cron expression
// of p matches, in p's time zone; the zero time when none will.
func nextPeriodicLaunch(p *api.PeriodicConfig, now time.Time) time.Time {
	loc := time.UTC
	if tz := derefString(p.TimeZone); tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return time.Time{}
		}
		loc = l
	}
	specs := p.Specs
	if s := derefString(p.Spec); s != "" {
		specs = append([]string{s}, specs...)
	}
	var next time.Time
	for _, s := range specs {
		e, err := cronexpr.Parse(s)
		if err != nil {
			continue
		}
		if t := e.Next(now.In(loc)); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// childJobs lists the jobs launched or dispatched from parentID.
func childJobs(c *api.Client, parentID string) ([]*api.JobListStub, error) {
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: parentID + "/"})
	if err != nil {
		return nil, err
	}
	var out []*api.JobListStub
	for _, j := range jobs {
		if j.ParentID == parentID {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].SubmitTime > out[b].SubmitTime })
	return out, nil
}

// formatTemplateJob renders the part of `job status` that a periodic or
// parameterized job shows instead of its summary and allocations, as
// Nomad does: its schedule or parameters, its children counted by status,
// and the children themselves, newest first.
func formatTemplateJob(j *api.Job, children []*api.JobListStub, now time.Time) ([]kv, string) {
	var b strings.Builder
	periodic := j.Periodic != nil
	param := j.ParameterizedJob != nil && !j.Dispatched
	pairs := []kv{{"Periodic", fmt.Sprint(periodic)}, {"Parameterized", fmt.Sprint(param)}}
	if periodic && !param {
		next := "<none>"
		if j.Periodic.Enabled == nil || *j.Periodic.Enabled {
			if t := nextPeriodicLaunch(j.Periodic, now); !t.IsZero() {
				next = fmt.Sprintf("%s (%s)", t.UTC().Format(time.RFC3339), timeAgo(t, now))
			}
		}
		pairs = append(pairs, kv{"Next Periodic Launch", next})
	}
	if param {
		p := j.ParameterizedJob
		payload := p.Payload
		if payload == "" {
			payload = "optional"
		}
		b.WriteString("\nParameterized Job\n")
		b.WriteString(formatKV([]kv{
			{"Payload", payload},
			{"Required Metadata", strings.Join(p.MetaRequired, ", ")},
			{"Optional Metadata", strings.Join(p.MetaOptional, ", ")},
		}))
	}
	var pending, running, dead int
	for _, c := range children {
		switch c.Status {
		case "pending":
			pending++
		case "running":
			running++
		default:
			dead++
		}
	}
	title, list := "Children Job Summary", "Previously Launched Jobs"
	if param {
		title, list = "Parameterized Job Summary", "Dispatched Jobs"
	}
	fmt.Fprintf(&b, "\n%s\n", title)
	b.WriteString(formatTable([]string{"Pending", "Running", "Dead"},
		[][]string{{fmt.Sprint(pending), fmt.Sprint(running), fmt.Sprint(dead)}}))
	fmt.Fprintf(&b, "\n%s\n", list)
	if len(children) == 0 {
		b.WriteString("No instances of this job found\n")
		return pairs, b.String()
	}
	rows := make([][]string, 0, len(children))
	for _, c := range children {
		rows = append(rows, []string{c.ID, jobStatusText(c.Status, c.Stop)})
	}
	b.WriteString(formatTable([]string{"ID", "Status"}, rows))
	return pairs, b.String()
}

func runJobPeriodicForce(m *Meta, args []string) int {
	fset := m.apiFlagSet("job periodic force", "[options] <job>", `
Launch a child of a periodic job now, whatever its schedule and even if
prohibit_overlap would hold the launch back.

Unless -detach is given, follow the child's evaluation and print where its
allocations were placed.`)
	detach := fset.Bool("detach", false, "Return once the child is launched, printing its evaluation's ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	timeout := fset.Duration("timeout", 5*time.Minute, "How long to follow the evaluation before giving up with exit code 1 (drover-specific).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the periodic job's ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID := fset.Arg(0)
	evalID, _, err := c.Jobs().PeriodicForce(jobID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("forcing a launch of periodic job %q", jobID), err)
	}
	if *detach || evalID == "" {
		fmt.Fprintf(m.stdout, "Job %q launched: evaluation ID %s\n", jobID, evalID)
		return exitOK
	}
	return m.followEval(c, jobID, evalID, *verbose, *timeout)
}

// followEval monitors an evaluation as job run does.
func (m *Meta) followEval(c *api.Client, jobID, evalID string, verbose bool, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	mon := newMonitor(m, c, verbose)
	eval, err := mon.watchEval(ctx, evalID)
	if err != nil {
		if ctx.Err() != nil {
			return mon.timedOut(jobID)
		}
		return m.fail("monitoring evaluation", err)
	}
	return mon.reportEval(eval)
}

// metaFlags collects repeated -meta key=value flags.
type metaFlags map[string]string

func (f metaFlags) String() string { return "" }

func (f metaFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	f[k] = v
	return nil
}

func runJobDispatch(m *Meta, args []string) int {
	fset := m.apiFlagSet("job dispatch", "[options] <parameterized job> [input source]", `
Dispatch an instance of a parameterized job: a child job that carries the
payload read from the input source (a file, or - for standard input) and
the metadata given with -meta. The job's parameterized block says whether a
payload is required, optional or forbidden (at most 16 KiB) and which meta
keys are required or allowed.

Unless -detach is given, follow the child's evaluation and print where its
allocations were placed.`)
	meta := metaFlags{}
	fset.Var(meta, "meta", "Meta key=value for the dispatched job; repeat for several.")
	prefix := fset.String("id-prefix-template", "", "Put this in the dispatched job's ID: <job>/dispatch-<template>-<time>-<random>.")
	token := fset.String("idempotency-token", "", "Dispatch at most once with this token: a second dispatch answers the first child while it exists.")
	detach := fset.Bool("detach", false, "Return once the job is dispatched, printing its ID and evaluation ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	timeout := fset.Duration("timeout", 5*time.Minute, "How long to follow the evaluation before giving up with exit code 1 (drover-specific).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return m.usageError(fset, "this command takes the job's ID and, optionally, a payload file (- for standard input)")
	}
	jobID := fset.Arg(0)
	var payload []byte
	if fset.NArg() == 2 {
		var err error
		if payload, err = readPayload(fset.Arg(1), m.stdin, m.readFile); err != nil {
			fmt.Fprintf(m.stderr, "Error reading the payload: %v\n", err)
			return exitError
		}
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	resp, _, err := c.Jobs().Dispatch(jobID, &api.JobDispatchRequest{
		Payload: payload, Meta: meta, IdPrefixTemplate: *prefix, IdempotencyToken: *token,
	}, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("dispatching job %q", jobID), err)
	}
	fmt.Fprintf(m.stdout, "Dispatched Job ID = %s\n", resp.DispatchedJobID)
	if resp.EvalID == "" {
		return exitOK
	}
	fmt.Fprintf(m.stdout, "Evaluation ID     = %s\n", shortID(resp.EvalID, *verbose))
	if *detach {
		return exitOK
	}
	fmt.Fprintln(m.stdout)
	return m.followEval(c, resp.DispatchedJobID, resp.EvalID, *verbose, *timeout)
}

// readPayload reads a dispatch payload from a file or, for "-", from
// stdin, refusing one over the server's limit before sending it.
func readPayload(src string, stdin io.Reader, readFile func(string) ([]byte, error)) ([]byte, error) {
	const limit = 16 * 1024
	var b []byte
	var err error
	if src == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("no standard input")
		}
		b, err = io.ReadAll(io.LimitReader(stdin, limit+1))
	} else {
		b, err = readFile(src)
	}
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("the payload is over %d bytes: dispatch payloads are limited to 16 KiB", limit)
	}
	return b, nil
}

// registeredWithoutEval is what `job run` prints for a registration that
// created no evaluation: a periodic job's next launch, a parameterized
// job's way to run, or an unchanged job.
func registeredWithoutEval(j *api.Job, now time.Time) string {
	switch {
	case j.Periodic != nil && j.ParameterizedJob == nil:
		next := "<none>"
		if t := nextPeriodicLaunch(j.Periodic, now); !t.IsZero() {
			next = fmt.Sprintf("%s (%s)", t.UTC().Format(time.RFC3339), timeAgo(t, now))
		}
		return "Job registration successful\nApproximate next launch time: " + next + " (periodic job: its children run, not the job)"
	case j.ParameterizedJob != nil:
		return "Job registration successful\nParameterized job: run it with `drover job dispatch " + derefString(j.ID) + "`"
	}
	return "Job registration successful (no evaluation was needed)"
}
