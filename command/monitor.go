package command

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// Exit codes of commands that follow an evaluation.
const (
	exitOK               = 0
	exitError            = 1
	exitPlacementFailure = 2
)

// blockingWait bounds each blocking query of the monitor; minPollInterval
// paces it when the agent answers without waiting for a change.
const (
	blockingWait    = 5 * time.Second
	minPollInterval = 250 * time.Millisecond
)

// monitor follows an evaluation and the allocations it placed, printing a
// timestamped line for each change it sees.
type monitor struct {
	m       *Meta
	c       *api.Client
	verbose bool

	allocs      map[string]*api.AllocationListStub // seen, by ID
	allocOrder  []string                           // IDs in the order seen
	allocStatus map[string]string                  // last client status printed
}

func newMonitor(m *Meta, c *api.Client, verbose bool) *monitor {
	return &monitor{m: m, c: c, verbose: verbose,
		allocs: map[string]*api.AllocationListStub{}, allocStatus: map[string]string{}}
}

// header prints a "==> time: ..." line; detail an indented one.
func (mon *monitor) header(format string, a ...any) {
	fmt.Fprintf(mon.m.stdout, "==> %s: %s\n", formatTime(mon.m.now()), fmt.Sprintf(format, a...))
}

func (mon *monitor) detail(format string, a ...any) {
	fmt.Fprintf(mon.m.stdout, "    %s: %s\n", formatTime(mon.m.now()), fmt.Sprintf(format, a...))
}

func (mon *monitor) id(s string) string { return shortID(s, mon.verbose) }

// watchEval follows the evaluation until the scheduler has processed it and
// returns it as it ended.
func (mon *monitor) watchEval(ctx context.Context, evalID string) (*api.Evaluation, error) {
	c := mon.c.WithContext(ctx)
	mon.header("Monitoring evaluation %q", mon.id(evalID))
	status := api.EvalStatusPending // every evaluation starts pending
	var index uint64
	first := true
	for {
		started := time.Now()
		eval, qm, err := c.Evaluations().Info(evalID, &api.QueryOptions{WaitIndex: index, WaitTime: blockingWait})
		if err != nil {
			return nil, err
		}
		if first {
			mon.detail("Evaluation triggered by job %q", eval.JobID)
			first = false
		}
		allocs, _, err := c.Evaluations().Allocations(evalID, nil)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if a.DesiredStatus != "" && a.DesiredStatus != api.AllocDesiredStatusRun {
				continue // stopped by this evaluation, not placed by it
			}
			if _, ok := mon.allocs[a.ID]; !ok {
				mon.allocs[a.ID] = a
				mon.allocOrder = append(mon.allocOrder, a.ID)
				mon.allocStatus[a.ID] = a.ClientStatus
				mon.detail("Allocation %q created: node %q, group %q", mon.id(a.ID), mon.id(a.NodeID), a.TaskGroup)
			}
		}
		if eval.Status != status {
			mon.detail("Evaluation status changed: %q -> %q", status, eval.Status)
			status = eval.Status
		}
		if eval.Terminal() {
			return eval, nil
		}
		index = mon.pace(ctx, started, index, qm)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// pace returns the index for the next blocking query and, when the agent
// answered at once without a newer index, waits a little so that the loop
// does not spin.
func (mon *monitor) pace(ctx context.Context, started time.Time, index uint64, qm *api.QueryMeta) uint64 {
	if qm.LastIndex > index {
		return qm.LastIndex
	}
	if wait := minPollInterval - time.Since(started); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return index
}

// reportEval prints how the evaluation ended and returns the exit code so
// far: 2 when allocations could not be placed, 1 when the evaluation failed.
func (mon *monitor) reportEval(eval *api.Evaluation) int {
	if eval.Status != api.EvalStatusComplete {
		msg := fmt.Sprintf("Evaluation %q finished with status %q", mon.id(eval.ID), eval.Status)
		if eval.StatusDescription != "" {
			msg += ": " + eval.StatusDescription
		}
		mon.header("%s", msg)
		return exitError
	}
	if len(eval.FailedTGAllocs) == 0 {
		mon.header("Evaluation %q finished with status %q", mon.id(eval.ID), eval.Status)
		return exitOK
	}
	mon.header("Evaluation %q finished with status %q but failed to place all allocations:", mon.id(eval.ID), eval.Status)
	fmt.Fprint(mon.m.stdout, placementFailures(eval.FailedTGAllocs, "    "))
	if eval.BlockedEval != "" {
		mon.detail("Evaluation %q waiting for additional capacity to place remainder", mon.id(eval.BlockedEval))
	}
	return exitPlacementFailure
}

// waitAllocs waits until every allocation the evaluation placed is running
// (or finished, for batch jobs: complete or failed) and returns 0 when none
// failed.
func (mon *monitor) waitAllocs(ctx context.Context, jobID, jobType string) int {
	if len(mon.allocOrder) == 0 {
		return exitOK
	}
	c := mon.c.WithContext(ctx)
	batch := jobType == api.JobTypeBatch
	if batch {
		mon.header("Waiting for allocations to finish")
	} else {
		mon.header("Waiting for allocations to start")
	}
	var index uint64
	for {
		started := time.Now()
		list, qm, err := c.Jobs().Allocations(jobID, true, &api.QueryOptions{WaitIndex: index, WaitTime: blockingWait})
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return mon.timedOut(jobID)
			}
			fmt.Fprintln(mon.m.stderr, errorText("querying allocations", err))
			return exitError
		}
		for _, a := range list {
			if _, ours := mon.allocs[a.ID]; !ours {
				continue
			}
			mon.allocs[a.ID] = a
			if prev := mon.allocStatus[a.ID]; prev != a.ClientStatus {
				desc := ""
				if a.ClientDescription != "" {
					desc = " (" + a.ClientDescription + ")"
				}
				mon.detail("Allocation %q status changed: %q -> %q%s", mon.id(a.ID), prev, a.ClientStatus, desc)
				mon.allocStatus[a.ID] = a.ClientStatus
			}
		}
		if done, code := mon.allocsSettled(batch); done {
			return code
		}
		index = mon.pace(ctx, started, index, qm)
		if ctx.Err() != nil {
			return mon.timedOut(jobID)
		}
	}
}

// allocsSettled reports whether every followed allocation reached the state
// waited for and, if so, prints the outcome and returns its exit code.
func (mon *monitor) allocsSettled(batch bool) (bool, int) {
	var failed []*api.AllocationListStub
	for _, id := range mon.allocOrder {
		a := mon.allocs[id]
		switch a.ClientStatus {
		case api.AllocClientStatusFailed, api.AllocClientStatusLost:
			failed = append(failed, a)
		case api.AllocClientStatusComplete:
		case api.AllocClientStatusRunning:
			if batch {
				return false, 0
			}
		default:
			return false, 0
		}
	}
	if len(failed) > 0 {
		mon.header("%d of %d allocations failed:", len(failed), len(mon.allocOrder))
		for _, a := range failed {
			fmt.Fprint(mon.m.stdout, allocFailureText(a, mon.verbose))
		}
		return true, exitError
	}
	if batch {
		mon.header("All allocations completed")
	} else {
		mon.header("All allocations are running")
	}
	return true, exitOK
}

func (mon *monitor) timedOut(jobID string) int {
	mon.header("Timed out waiting for allocations; see `drover job status %s`", jobID)
	return exitError
}

// allocFailureText says why an allocation failed: the last events of each
// failed task.
func allocFailureText(a *api.AllocationListStub, verbose bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    Allocation %q %s", shortID(a.ID, verbose), a.ClientStatus)
	if a.ClientDescription != "" {
		fmt.Fprintf(&b, ": %s", a.ClientDescription)
	}
	b.WriteString("\n")
	names := sortedKeys(a.TaskStates)
	sort.Strings(names)
	for _, n := range names {
		ts := a.TaskStates[n]
		if ts == nil || !ts.Failed {
			continue
		}
		fmt.Fprintf(&b, "      Task %q failed", n)
		if ev := lastMeaningfulEvent(ts.Events); ev != nil {
			fmt.Fprintf(&b, ": %s: %s", ev.Type, eventDescription(ev))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "    See `drover alloc status %s`\n", shortID(a.ID, verbose))
	return b.String()
}

// lastMeaningfulEvent returns the event that explains a task's failure:
// the newest that failed the task or ended it (a driver or setup failure, a
// non-zero exit), passing over the restart bookkeeping that follows it
// ("Not Restarting"); the newest event when none does.
func lastMeaningfulEvent(evs []*api.TaskEvent) *api.TaskEvent {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Type {
		case "Not Restarting", "Restarting", "Killing", "Killed":
			continue
		case "Terminated", "Driver Failure", "Setup Failure", "Task hook failed":
			return evs[i]
		}
		if evs[i].FailsTask {
			return evs[i]
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return evs[len(evs)-1]
}
