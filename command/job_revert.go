package command

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

func runJobRevert(m *Meta, args []string) int {
	fset := m.apiFlagSet("job revert", "[options] <job> <version|tag>", `
Register a kept version of a job again, as its newest version (see
drover job history); the version is its number or the name of its tag
(drover job tag apply). Unless -detach is given, follow the evaluation it
creates, then the deployment of the reverted version, as drover job run
does, with the same exit codes.`)
	detach := fset.Bool("detach", false, "Return once the job is reverted, printing the evaluation ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 2 {
		return m.usageError(fset, "this command takes two arguments: the job ID and the version to revert to")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), false)
	if jobID == "" {
		return code
	}
	version, err := strconv.ParseUint(fset.Arg(1), 10, 64)
	if err != nil {
		// Not a number: the name of a version tag (job tag apply).
		v, ok := m.versionByTag(c, jobID, fset.Arg(1))
		if !ok {
			return exitError
		}
		version = v
	}
	resp, _, err := c.Jobs().Revert(jobID, version, nil, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reverting job %q", jobID), err)
	}
	if resp.EvalID == "" || *detach {
		fmt.Fprintf(m.stdout, "Job %q reverted to version %d\n", jobID, version)
		if resp.EvalID != "" {
			fmt.Fprintf(m.stdout, "Evaluation ID: %s\n", resp.EvalID)
		}
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, resp.EvalID)
	if err != nil {
		if ctx.Err() != nil {
			return mon.timedOut(jobID)
		}
		return m.fail("monitoring evaluation", err)
	}
	code = mon.reportEval(eval)
	if code == exitError {
		return code
	}
	exit, _ := mon.followDeployment(ctx, jobID, resp.JobModifyIndex, code)
	return exit
}
