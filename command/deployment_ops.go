package command

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-io/drover/api"
)

func runDeploymentFail(m *Meta, args []string) int {
	return deploymentChange(m, args, "fail", `
Mark an active deployment failed: no more of its allocations are
replaced. When one of its task groups sets auto_revert, the job goes back
to its latest stable version. Unless -detach is given, follow the
evaluation this creates.`, nil, func(d *api.Deployments, id string) (*api.DeploymentUpdateResponse, error) {
		r, _, err := d.Fail(id, nil)
		return r, err
	})
}

func runDeploymentPause(m *Meta, args []string) int {
	return deploymentChange(m, args, "pause", `
Pause an active deployment: it places no new batch of allocations until
it is resumed (drover deployment resume).`, nil, func(d *api.Deployments, id string) (*api.DeploymentUpdateResponse, error) {
		r, _, err := d.Pause(id, true, nil)
		return r, err
	})
}

func runDeploymentResume(m *Meta, args []string) int {
	return deploymentChange(m, args, "resume", `
Resume a paused deployment: it places its next batch, and each task group
has a fresh progress_deadline. Unless -detach is given, follow the
evaluation this creates.`, nil, func(d *api.Deployments, id string) (*api.DeploymentUpdateResponse, error) {
		r, _, err := d.Pause(id, false, nil)
		return r, err
	})
}

// deploymentVerb returns the -ing and past forms of a change, for
// deploymentChange's messages.
func deploymentVerb(verb string) (ing, past string) {
	switch verb {
	case "fail":
		return "failing", "failed"
	case "pause":
		return "pausing", "paused"
	case "promote":
		return "promoting", "promoted"
	}
	return "resuming", "resumed"
}

// deploymentChange runs `deployment <verb> <id>`: it resolves the ID
// prefix, applies change, and follows the evaluation it created. flags,
// when set, adds the verb's own flags.
func deploymentChange(m *Meta, args []string, verb, help string, flags func(*flagSet), change func(*api.Deployments, string) (*api.DeploymentUpdateResponse, error)) int {
	fset := m.apiFlagSet("deployment "+verb, "[options] <deployment>", help)
	if flags != nil {
		flags(fset)
	}
	detach := fset.Bool("detach", false, "Return at once, printing the evaluation ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the deployment ID (or a prefix)")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	d, _, err := c.Deployments().Info(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("retrieving deployment %q", fset.Arg(0)), err)
	}
	ing, past := deploymentVerb(verb)
	resp, err := change(c.Deployments(), d.ID)
	if err != nil {
		return m.fail(fmt.Sprintf("%s deployment %q", ing, shortID(d.ID, *verbose)), err)
	}
	fmt.Fprintf(m.stdout, "Deployment %q %s\n", shortID(d.ID, *verbose), past)
	if resp.RevertedJobVersion != nil {
		fmt.Fprintf(m.stdout, "Job %q reverted to version %d\n", d.JobID, *resp.RevertedJobVersion)
	}
	if resp.EvalID == "" {
		return exitOK
	}
	if *detach {
		fmt.Fprintf(m.stdout, "Evaluation ID: %s\n", resp.EvalID)
		return exitOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mon := newMonitor(m, c, *verbose)
	eval, err := mon.watchEval(ctx, resp.EvalID)
	if err != nil {
		if ctx.Err() != nil {
			return mon.timedOut(d.JobID)
		}
		return m.fail("monitoring evaluation", err)
	}
	return mon.reportEval(eval)
}
