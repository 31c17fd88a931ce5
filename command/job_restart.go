package command

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/api"
)

// restartOptions are the flags of `job restart`.
type restartOptions struct {
	batchSize  int  // allocations per batch (batchPct: percent of them)
	batchPct   bool // batchSize is a percentage
	batchWait  time.Duration
	ask        bool // -batch-wait ask
	groups     []string
	tasks      []string
	allTasks   bool
	reschedule bool
	yes        bool
	onErrorAsk bool
	verbose    bool
}

// batchSizeFlag parses -batch-size: a count, or a percentage ("25%").
type batchSizeFlag struct{ o *restartOptions }

func (f batchSizeFlag) String() string { return "" }

func (f batchSizeFlag) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || n < 1 || (pct && n > 100) {
		return fmt.Errorf("-batch-size %q: use a count of at least 1 or a percentage from 1%% to 100%%", s)
	}
	f.o.batchSize, f.o.batchPct = n, pct
	return nil
}

// batchWaitFlag parses -batch-wait: a duration, or "ask".
type batchWaitFlag struct{ o *restartOptions }

func (f batchWaitFlag) String() string { return "" }

func (f batchWaitFlag) Set(s string) error {
	if s == "ask" {
		f.o.ask = true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("-batch-wait %q: use a duration (10s, 1m) or \"ask\"", s)
	}
	f.o.batchWait, f.o.ask = d, false
	return nil
}

// listFlag collects a repeated string flag.
type listFlag struct{ l *[]string }

func (f listFlag) String() string { return "" }

func (f listFlag) Set(s string) error {
	*f.l = append(*f.l, s)
	return nil
}

func runJobRestart(m *Meta, args []string) int {
	o := &restartOptions{batchSize: 1, onErrorAsk: true}
	fset := m.apiFlagSet("job restart", "[options] <job>", `
Restart the running allocations of a job, batch by batch: the tasks of
each allocation restart in place on their node (as drover alloc restart
does), or with -reschedule the allocations are stopped and replaced by new
ones, placed by the scheduler. Each batch is restarted at once; the next
starts when it is done, after -batch-wait (or when you answer, with
-batch-wait ask).

Exit codes: 0 when every allocation restarted, 1 on errors and when the
restart was stopped.`)
	fset.Var(batchSizeFlag{o}, "batch-size", "How many allocations to restart at once: a count, or a percentage of them (\"25%\"). Default 1.")
	fset.Var(batchWaitFlag{o}, "batch-wait", "How long to wait between batches (\"10s\"), or \"ask\" to ask before each. Default 0.")
	fset.Var(listFlag{&o.groups}, "group", "Only restart the allocations of this task group; repeat it for several.")
	fset.Var(listFlag{&o.tasks}, "task", "Only restart this task; repeat it for several. Not with -all-tasks or -reschedule.")
	fset.BoolVar(&o.allTasks, "all-tasks", false, "Restart every task, running the lifecycle tasks that completed again.")
	fset.BoolVar(&o.reschedule, "reschedule", false, "Stop each allocation and let the scheduler place a replacement, rather than restart it in place.")
	fset.BoolVar(&o.yes, "yes", false, "Answer yes to every question: go on after a failed batch and do not wait for answers.")
	onError := fset.String("on-error", "ask", "What to do when a batch fails: \"ask\" whether to go on, or \"fail\".")
	fset.BoolVar(&o.verbose, "verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	switch *onError {
	case "ask":
	case "fail":
		o.onErrorAsk = false
	default:
		return m.usageError(fset, fmt.Sprintf("-on-error %q: use ask or fail", *onError))
	}
	if len(o.tasks) > 0 && (o.allTasks || o.reschedule) {
		return m.usageError(fset, "-task cannot be used with -all-tasks or -reschedule")
	}
	if o.allTasks && o.reschedule {
		return m.usageError(fset, "-all-tasks cannot be used with -reschedule")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), o.verbose)
	if jobID == "" {
		return code
	}
	r := &restarter{m: m, c: c, o: o, jobID: jobID, in: bufio.NewReader(orEmpty(m.stdin))}
	return r.run()
}

// orEmpty returns r, or an empty reader.
func orEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}

// restarter runs one `job restart`.
type restarter struct {
	m     *Meta
	c     *api.Client
	o     *restartOptions
	jobID string
	in    *bufio.Reader
}

// restartTarget is one allocation to restart and the tasks to restart in
// it (none: its running tasks, or all with -all-tasks).
type restartTarget struct {
	alloc *api.AllocationListStub
	tasks []string
}

func (r *restarter) run() int {
	m, o := r.m, r.o
	job, _, err := r.c.Jobs().Info(r.jobID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying job %q", r.jobID), err)
	}
	targets, err := r.targets(job)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error: %v\n", err)
		return exitError
	}
	if len(targets) == 0 {
		fmt.Fprintf(m.stdout, "No running allocations of job %q to restart\n", r.jobID)
		return exitOK
	}
	size := o.batchSize
	if o.batchPct {
		size = int(math.Ceil(float64(len(targets)) * float64(o.batchSize) / 100))
	}
	size = max(size, 1)
	batches := (len(targets) + size - 1) / size
	r.header("Restarting %d allocation%s in %d batch%s of at most %d", len(targets), plural(len(targets)), batches, pluralES(batches), size)
	failed := 0
	for b := 0; b < batches; b++ {
		batch := targets[b*size : min((b+1)*size, len(targets))]
		r.detail("Restarting batch %d of %d (%d allocation%s)", b+1, batches, len(batch), plural(len(batch)))
		errs := r.restartBatch(batch)
		for _, err := range errs {
			r.detail("%v", err)
		}
		failed += len(errs)
		last := b == batches-1
		if len(errs) > 0 && !last {
			if !o.onErrorAsk {
				fmt.Fprintf(m.stderr, "Error: batch %d failed: stopping the restart (-on-error fail)\n", b+1)
				return exitError
			}
			if !o.yes && !r.confirm(fmt.Sprintf("Batch %d had errors. Go on with the next batch? [y/N] ", b+1)) {
				fmt.Fprintln(m.stderr, "Restart stopped: the remaining batches were not restarted")
				return exitError
			}
		}
		if last {
			break
		}
		switch {
		case o.ask && !o.yes:
			if !r.confirm(fmt.Sprintf("Proceed with batch %d of %d? [y/N] ", b+2, batches)) {
				fmt.Fprintln(m.stderr, "Restart stopped: the remaining batches were not restarted")
				return exitError
			}
		case o.batchWait > 0:
			r.detail("Waiting %s before the next batch", o.batchWait)
			if m.sleep == nil {
				break
			}
			if err := m.sleep(context.Background(), o.batchWait); err != nil {
				fmt.Fprintf(m.stderr, "Error: %v\n", err)
				return exitError
			}
		}
	}
	if failed > 0 {
		r.header("Finished job restart: %d of %d allocation%s failed to restart", failed, len(targets), plural(len(targets)))
		return exitError
	}
	r.header("Finished job restart")
	fmt.Fprintln(m.stdout, "\nAll allocations restarted successfully!")
	return exitOK
}

// targets returns the allocations to restart, oldest first, with their
// tasks: the running allocations of the job's current groups named by
// -group (all without it), with a task of -task when given.
func (r *restarter) targets(job *api.Job) ([]restartTarget, error) {
	groupTasks := map[string][]string{}
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			groupTasks[derefString(tg.Name)] = append(groupTasks[derefString(tg.Name)], t.Name)
		}
	}
	for _, g := range r.o.groups {
		if _, ok := groupTasks[g]; !ok {
			return nil, fmt.Errorf("job %q has no group %q", r.jobID, g)
		}
	}
	for _, t := range r.o.tasks {
		found := false
		for g, ts := range groupTasks {
			if (len(r.o.groups) == 0 || slices.Contains(r.o.groups, g)) && slices.Contains(ts, t) {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no group of job %q to restart has a task %q", r.jobID, t)
		}
	}
	allocs, _, err := r.c.Jobs().Allocations(r.jobID, false, nil)
	if err != nil {
		return nil, fmt.Errorf("query the allocations of job %q: %w", r.jobID, err)
	}
	slices.SortStableFunc(allocs, func(a, b *api.AllocationListStub) int { return cmp.Compare(a.CreateIndex, b.CreateIndex) })
	var out []restartTarget
	for _, a := range allocs {
		if a.DesiredStatus != "run" || a.ClientStatus != "running" {
			continue
		}
		if len(r.o.groups) > 0 && !slices.Contains(r.o.groups, a.TaskGroup) {
			continue
		}
		t := restartTarget{alloc: a}
		for _, name := range r.o.tasks {
			if slices.Contains(groupTasks[a.TaskGroup], name) {
				t.tasks = append(t.tasks, name)
			}
		}
		if len(r.o.tasks) > 0 && len(t.tasks) == 0 {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// restartBatch restarts the batch's allocations at once and returns the
// errors, one per allocation that failed.
func (r *restarter) restartBatch(batch []restartTarget) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards errs and the output
		errs []error
	)
	for _, t := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg, err := r.restartOne(t)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			r.detail("%s", msg)
		}()
	}
	wg.Wait()
	return errs
}

// restartOne restarts (or with -reschedule stops) one allocation.
func (r *restarter) restartOne(t restartTarget) (string, error) {
	a := &api.Allocation{ID: t.alloc.ID}
	id := shortID(t.alloc.ID, r.o.verbose)
	switch {
	case r.o.reschedule:
		resp, err := r.c.Allocations().Stop(a, nil)
		if err != nil {
			return "", fmt.Errorf("stopping allocation %s for group %q: %s", id, t.alloc.TaskGroup, api.ErrorMessage(err))
		}
		return fmt.Sprintf("Rescheduling allocation %s for group %q (evaluation %s)", id, t.alloc.TaskGroup, shortID(resp.EvalID, r.o.verbose)), nil
	case r.o.allTasks:
		if err := r.c.Allocations().RestartAllTasks(a, nil); err != nil {
			return "", fmt.Errorf("restarting all tasks of allocation %s for group %q: %s", id, t.alloc.TaskGroup, api.ErrorMessage(err))
		}
		return fmt.Sprintf("Restarted all tasks of allocation %s for group %q", id, t.alloc.TaskGroup), nil
	case len(t.tasks) > 0:
		var done []string
		for _, task := range t.tasks {
			if err := r.c.Allocations().Restart(a, task, nil); err != nil {
				return "", fmt.Errorf("restarting task %q of allocation %s for group %q: %s", task, id, t.alloc.TaskGroup, api.ErrorMessage(err))
			}
			done = append(done, strconv.Quote(task))
		}
		return fmt.Sprintf("Restarted task%s %s of allocation %s for group %q", plural(len(done)), strings.Join(done, ", "), id, t.alloc.TaskGroup), nil
	}
	if err := r.c.Allocations().Restart(a, "", nil); err != nil {
		return "", fmt.Errorf("restarting allocation %s for group %q: %s", id, t.alloc.TaskGroup, api.ErrorMessage(err))
	}
	return fmt.Sprintf("Restarted the running tasks of allocation %s for group %q", id, t.alloc.TaskGroup), nil
}

// confirm asks question on stdout and reads a yes or no from stdin;
// anything but yes (and the end of input) is no.
func (r *restarter) confirm(question string) bool {
	fmt.Fprint(r.m.stdout, question)
	line, err := r.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	fmt.Fprintln(r.m.stdout)
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func (r *restarter) header(format string, a ...any) {
	fmt.Fprintf(r.m.stdout, "==> %s: %s\n", formatTime(r.m.now()), fmt.Sprintf(format, a...))
}

func (r *restarter) detail(format string, a ...any) {
	fmt.Fprintf(r.m.stdout, "    %s: %s\n", formatTime(r.m.now()), fmt.Sprintf(format, a...))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
