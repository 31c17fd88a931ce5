package command

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"
)

func runJobRun(m *Meta, args []string) int {
	fset := m.apiFlagSet("job run", "[options] <file>", `
Submit a job file: the job is created, or updated if it exists. The file
is parsed and checked here (see drover job validate), so syntax errors and
mistakes in tasks' config blocks are reported with file:line:col before
anything is sent.

Unless -detach is given, follow the evaluation the submission created:
print where allocations were placed, or why they could not be. Then, for a
service job with an update strategy (every service job has one unless it
sets max_parallel = 0), follow the deployment of the new version: its
allocations, their health, each group's progress, until it succeeds or
fails. Other jobs are followed until their allocations are running (batch
jobs: finished).

Exit codes: 0 when the job came up, 1 on errors and when the deployment
failed or allocations failed, 2 when some allocations could not be placed.`)
	detach := fset.Bool("detach", false, "Return once the job is submitted, printing the evaluation ID, without following it.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	timeout := fset.Duration("timeout", 5*time.Minute, "How long to follow the evaluation, then the deployment or the allocations, before giving up with exit code 1 (drover-specific).")
	checkIndex := fset.Uint64("check-index", 0, "Register only if the job's modify index is this one (0: only if the job does not exist yet); `drover job plan` prints it.")
	jv := addVarFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job file")
	}
	path := fset.Arg(0)
	job, ok := m.readJob(path, jv)
	if !ok {
		return exitError
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	enforce := false
	fset.Visit(func(f *flag.Flag) { enforce = enforce || f.Name == "check-index" })
	resp, _, err := c.Jobs().RegisterWithSource(job, enforce, *checkIndex, m.jobSource(path, jv), nil)
	if err != nil {
		return m.fail("submitting job", err)
	}
	if w := strings.TrimSpace(resp.Warnings); w != "" {
		fmt.Fprintf(m.stdout, "Job Warnings:\n%s\n\n", w)
	}
	if resp.EvalID == "" {
		fmt.Fprintln(m.stdout, registeredWithoutEval(job, m.now())) // job_periodic.go
		return exitOK
	}
	if *detach {
		fmt.Fprintf(m.stdout, "Job registration successful\nEvaluation ID: %s\n", resp.EvalID)
		return exitOK
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, resp.EvalID)
	if err != nil {
		if ctx.Err() != nil {
			return mon.timedOut(derefString(job.ID))
		}
		return m.fail("monitoring evaluation", err)
	}
	code := mon.reportEval(eval)
	if code == exitError {
		return code
	}
	if followed, ok := mon.followDeployment(ctx, eval.JobID, resp.JobModifyIndex, code); ok {
		return followed
	}
	if waited := mon.waitAllocs(ctx, eval.JobID, eval.Type); waited != exitOK {
		return waited
	}
	return code
}
