package command

import (
	"context"
	"fmt"
	"time"
)

func runJobEval(m *Meta, args []string) int {
	fset := m.apiFlagSet("job eval", "[options] <job>", `
Create a new evaluation of a job, as if it had been submitted again: the
scheduler places what is missing (allocations that could not be placed
before, now that nodes or capacity changed).

Unless -detach is given, follow the evaluation and print where
allocations were placed, or why they could not be. Exit codes as job run's
evaluation: 0, 1 on errors, 2 when some allocations could not be placed.`)
	detach := fset.Bool("detach", false, "Return once the evaluation is created, printing its ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	force := fset.Bool("force-reschedule", false, "Replace the job's failed allocations now, whatever their reschedule policy's delay and attempts.")
	timeout := fset.Duration("timeout", 5*time.Minute, "How long to follow the evaluation before giving up with exit code 1 (drover-specific).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job's ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID := fset.Arg(0)
	evalID, _, err := c.Jobs().EvaluateWithOpts(jobID, *force, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("evaluating job %q", jobID), err)
	}
	if *detach {
		fmt.Fprintf(m.stdout, "Evaluation ID: %s\n", evalID)
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, evalID)
	if err != nil {
		if ctx.Err() != nil {
			return mon.timedOut(jobID)
		}
		return m.fail("monitoring evaluation", err)
	}
	return mon.reportEval(eval)
}
