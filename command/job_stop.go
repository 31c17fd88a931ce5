package command

import (
	"context"
	"fmt"
	"time"
)

func runJobStop(m *Meta, args []string) int {
	fset := m.apiFlagSet("job stop", "[options] <job>", `
Stop a job: the server stops its allocations and marks it dead. With
-purge the job is also removed, so that `+"`job status`"+` no longer lists it.
Unless -detach is given, follow the evaluation that stops the allocations.`)
	purge := fset.Bool("purge", false, "Remove the job from the server instead of keeping it as stopped.")
	detach := fset.Bool("detach", false, "Return at once, printing the evaluation ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), *verbose)
	if jobID == "" {
		return code
	}
	evalID, _, err := c.Jobs().Deregister(jobID, *purge, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("stopping job %q", jobID), err)
	}
	if *detach || evalID == "" {
		if evalID != "" {
			fmt.Fprintln(m.stdout, evalID)
		} else {
			fmt.Fprintf(m.stdout, "Job %q stopped\n", jobID)
		}
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, evalID)
	if err != nil {
		return m.fail("monitoring evaluation", err)
	}
	return mon.reportEval(eval)
}
