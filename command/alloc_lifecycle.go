package command

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// lookupAlloc resolves an allocation ID prefix and reads the allocation.
// On failure it prints why and returns nil and the exit code.
func (m *Meta) lookupAlloc(c *api.Client, prefix string, verbose bool) (*api.Allocation, int) {
	id, code := m.resolveAlloc(c, prefix, verbose)
	if id == "" {
		return nil, code
	}
	alloc, _, err := c.Allocations().Info(id, nil)
	if err != nil {
		return nil, m.fail(fmt.Sprintf("querying allocation %q", id), err)
	}
	return alloc, exitOK
}

// allocTasks returns the names of the tasks of the allocation's group,
// sorted, or nil when the allocation carries no job.
func allocTasks(a *api.Allocation) []string {
	if a.Job == nil {
		return nil
	}
	for _, tg := range a.Job.TaskGroups {
		if tg.Name == nil || *tg.Name != a.TaskGroup {
			continue
		}
		names := make([]string, 0, len(tg.Tasks))
		for _, t := range tg.Tasks {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		return names
	}
	return nil
}

// taskArg picks the task named by the -task flag or the optional second
// argument; they must agree. It returns "" when neither is set.
func taskArg(flagTask string, args []string) (string, error) {
	var argTask string
	if len(args) == 2 {
		argTask = args[1]
	}
	if flagTask != "" && argTask != "" && flagTask != argTask {
		return "", fmt.Errorf("the task is named twice, differently: -task=%s and %q", flagTask, argTask)
	}
	if flagTask != "" {
		return flagTask, nil
	}
	return argTask, nil
}

// checkTask prints an error and returns false when task is set but not a
// task of the allocation.
func (m *Meta) checkTask(a *api.Allocation, task string) bool {
	names := allocTasks(a)
	if task == "" || names == nil || slices.Contains(names, task) {
		return true
	}
	fmt.Fprintf(m.stderr, "Error: allocation %s has no task %q; its tasks are: %s\n",
		shortID(a.ID, false), task, strings.Join(names, ", "))
	return false
}

func runAllocRestart(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc restart", "[options] <alloc-id> [task]", `
Restart the tasks of a running allocation in place, on the node that runs
it, without rescheduling it and outside the tasks' restart policy. With a
task (as the second argument or -task) only that task restarts, and it
must be running; without one, every running task does (tasks that
finished, such as prestart tasks, are not run again). With -all-tasks
every task but the poststop ones restarts in lifecycle order: prestart
tasks run again (even those that completed), then the main tasks, then
the poststart tasks. -task and -all-tasks cannot be used together.

The request goes to the agent of the node that runs the allocation: the
agent at -address may be any agent, which forwards it to that node's.`)
	task := fset.String("task", "", "The task to restart.")
	all := fset.Bool("all-tasks", false, "Restart every task of the allocation, running again the lifecycle tasks that completed; not with -task.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return m.usageError(fset, "this command takes one or two arguments: the allocation ID and, optionally, a task")
	}
	name, err := taskArg(*task, fset.Args())
	if err != nil {
		return m.usageError(fset, err.Error())
	}
	if *all && name != "" {
		return m.usageError(fset, "-all-tasks restarts every task: do not name one as well")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	alloc, code := m.lookupAlloc(c, fset.Arg(0), *verbose)
	if alloc == nil {
		return code
	}
	if !m.checkTask(alloc, name) {
		return exitError
	}
	id := shortID(alloc.ID, *verbose)
	switch {
	case *all:
		err = c.Allocations().RestartAllTasks(alloc, nil)
	default:
		err = c.Allocations().Restart(alloc, name, nil)
	}
	if err != nil {
		return m.fail(fmt.Sprintf("restarting allocation %s", id), err)
	}
	switch {
	case name != "":
		fmt.Fprintf(m.stdout, "Restarted task %q of allocation %s\n", name, id)
	case *all:
		fmt.Fprintf(m.stdout, "Restarted all tasks of allocation %s\n", id)
	default:
		fmt.Fprintf(m.stdout, "Restarted the running tasks of allocation %s\n", id)
	}
	return exitOK
}

func runAllocSignal(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc signal", "[options] <alloc-id> [task]", `
Send a signal to the tasks of a running allocation: to one task (as the
second argument or -task), or to every running task. The signal is named
as in kill(1), with or without the SIG prefix (SIGHUP, HUP, SIGUSR1).
Each task records a Signaling event; a driver that fails to deliver the
signal is reported with its message.

The request goes to the agent of the node that runs the allocation: the
agent at -address may be any agent, which forwards it to that node's.`)
	sig := fset.String("s", "SIGKILL", "The signal to send.")
	task := fset.String("task", "", "The task to signal.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return m.usageError(fset, "this command takes one or two arguments: the allocation ID and, optionally, a task")
	}
	name, err := taskArg(*task, fset.Args())
	if err != nil {
		return m.usageError(fset, err.Error())
	}
	signal := strings.ToUpper(strings.TrimSpace(*sig))
	if signal == "" {
		return m.usageError(fset, "-s must name a signal")
	}
	if !strings.HasPrefix(signal, "SIG") {
		signal = "SIG" + signal
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	alloc, code := m.lookupAlloc(c, fset.Arg(0), *verbose)
	if alloc == nil {
		return code
	}
	if !m.checkTask(alloc, name) {
		return exitError
	}
	id := shortID(alloc.ID, *verbose)
	if err := c.Allocations().Signal(alloc, nil, name, signal); err != nil {
		return m.fail(fmt.Sprintf("signalling allocation %s", id), err)
	}
	if name != "" {
		fmt.Fprintf(m.stdout, "Sent %s to task %q of allocation %s\n", signal, name, id)
	} else {
		fmt.Fprintf(m.stdout, "Sent %s to the running tasks of allocation %s\n", signal, id)
	}
	return exitOK
}

func runAllocStop(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc stop", "[options] <alloc-id>", `
Stop an allocation: its tasks are killed and the scheduler places a
replacement as its job's count requires (on this or another node).
Unless -detach is given, follow the evaluation that places the
replacement.`)
	detach := fset.Bool("detach", false, "Return at once, printing the evaluation ID.")
	noShuffle := fset.Bool("no-shuffle", false, "Accepted for compatibility with Nomad; it has no effect.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the allocation ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	alloc, code := m.lookupAlloc(c, fset.Arg(0), *verbose)
	if alloc == nil {
		return code
	}
	var q *api.QueryOptions
	if *noShuffle {
		q = &api.QueryOptions{Params: map[string]string{"no_shuffle": "true"}}
	}
	resp, err := c.Allocations().Stop(alloc, q)
	if err != nil {
		return m.fail(fmt.Sprintf("stopping allocation %s", shortID(alloc.ID, *verbose)), err)
	}
	if *detach {
		fmt.Fprintln(m.stdout, resp.EvalID)
		return exitOK
	}
	fmt.Fprintf(m.stdout, "Stopped allocation %s; evaluation %s places its replacement\n",
		shortID(alloc.ID, *verbose), shortID(resp.EvalID, *verbose))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, resp.EvalID)
	if err != nil {
		return m.fail("monitoring evaluation", err)
	}
	return mon.reportEval(eval)
}

func runSystemGC(m *Meta, args []string) int {
	fset := m.apiFlagSet("system gc", "[options]", `
Garbage collect now, whatever the thresholds: the servers delete every
stopped or finished batch job whose work is all done, terminal evaluations
and allocations, finished deployments and down nodes without work (as
their leader does on its own every server.job_gc_interval); then the
agent's client, when it runs one, removes the directories and local state
of every terminal (complete, failed or lost) allocation, whatever its
gc_max_allocs and disk thresholds. Running allocations are never touched.`)
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	resp, err := c.System().GarbageCollect()
	if err != nil {
		return m.fail("garbage collecting", err)
	}
	switch n := len(resp.Collected); n {
	case 0:
		fmt.Fprintln(m.stdout, "Garbage collection done: no terminal allocations to remove")
	default:
		ids := make([]string, n)
		for i, id := range resp.Collected {
			ids[i] = shortID(id, *verbose)
		}
		noun := "allocations"
		if n == 1 {
			noun = "allocation"
		}
		fmt.Fprintf(m.stdout, "Garbage collection done: removed %d terminal %s: %s\n", n, noun, strings.Join(ids, ", "))
	}
	return exitOK
}
