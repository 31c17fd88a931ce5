package command

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/drover-io/drover/api"
)

func runJobScale(m *Meta, args []string) int {
	fset := m.apiFlagSet("job scale", "[options] <job> [<group>] <count>", `
Set the count of a job's task group, as an autoscaler does: the job gets a
new version with the count, and the change is recorded as a scaling event
(see drover job scaling-events). The group may be left out when the job has
only one. A count outside the group's scaling block's min and max is
refused unless -policy-override is given.

Unless -detach is given, follow the evaluation the change created, as
drover job run does, with the same exit codes.`)
	detach := fset.Bool("detach", false, "Return once the count is set, printing the evaluation ID.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	override := fset.Bool("policy-override", false, "Set a count outside the scaling block's bounds.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 2 && fset.NArg() != 3 {
		return m.usageError(fset, "this command takes the job ID, the group (optional when the job has one) and the count")
	}
	countArg := fset.Arg(fset.NArg() - 1)
	count, err := strconv.Atoi(countArg)
	if err != nil || count < 0 {
		return m.usageError(fset, fmt.Sprintf("count %q is not a whole number of at least 0", countArg))
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), *verbose)
	if jobID == "" {
		return code
	}
	group := ""
	if fset.NArg() == 3 {
		group = fset.Arg(1)
	} else {
		job, _, err := c.Jobs().Info(jobID, nil)
		if err != nil {
			return m.fail(fmt.Sprintf("querying job %q", jobID), err)
		}
		if len(job.TaskGroups) != 1 {
			fmt.Fprintf(m.stderr, "Error: job %q has %d task groups: name the one to scale\n", jobID, len(job.TaskGroups))
			return exitError
		}
		group = derefString(job.TaskGroups[0].Name)
	}
	n := int64(count)
	req := &api.ScalingRequest{Count: &n, Target: map[string]string{"Group": group}, PolicyOverride: *override,
		Message: "submitted using the drover CLI"}
	var resp api.JobRegisterResponse
	if _, err := c.Jobs().ScaleRequest(jobID, req, &resp, nil); err != nil {
		return m.fail(fmt.Sprintf("scaling job %q", jobID), err)
	}
	if *detach || resp.EvalID == "" {
		fmt.Fprintf(m.stdout, "Job %q group %q scaled to %d\n", jobID, group, count)
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
	return mon.reportEval(eval)
}

func runJobScalingEvents(m *Meta, args []string) int {
	fset := m.apiFlagSet("job scaling-events", "[options] <job>", `
List the scaling events of a job's task groups, newest first: count
changes by drover job scale or an autoscaler, and the messages and errors
autoscalers recorded.`)
	verbose := fset.Bool("verbose", false, "Show the messages, errors, evaluation IDs and meta of the events.")
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
	st, _, err := c.Jobs().ScaleStatus(jobID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying the scale status of job %q", jobID), err)
	}
	fmt.Fprint(m.stdout, formatScalingEvents(st, *verbose))
	return exitOK
}

// formatScalingEvents renders a job's groups' scaling events as a table.
func formatScalingEvents(st *api.JobScaleStatusResponse, verbose bool) string {
	header := []string{"Task Group", "Count", "PrevCount", "Date"}
	if verbose {
		header = append(header, "Error", "Message", "Eval ID", "Meta")
	}
	var rows [][]string
	for _, g := range sortedKeys(st.TaskGroups) {
		for _, e := range st.TaskGroups[g].Events {
			count := "-"
			if e.Count != nil {
				count = strconv.FormatInt(*e.Count, 10)
			}
			row := []string{g, count, strconv.FormatInt(e.PreviousCount, 10), formatUnixNano(int64(e.Time))}
			if verbose {
				meta := ""
				for _, k := range sortedKeys(e.Meta) {
					if meta != "" {
						meta += ","
					}
					meta += fmt.Sprintf("%s=%v", k, e.Meta[k])
				}
				row = append(row, strconv.FormatBool(e.Error), orNone(e.Message), orNone(derefString(e.EvalID)), orNone(meta))
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return "No events found\n"
	}
	return formatTable(header, rows)
}

func runJobAllocs(m *Meta, args []string) int {
	fset := m.apiFlagSet("job allocs", "[options] <job>", `
List the allocations of a job. Without -all, the allocations of an earlier
job registered under the same ID (since purged) are left out.`)
	all := fset.Bool("all", false, "Show the allocations of an earlier job of the same ID too.")
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
	allocs, _, err := c.Jobs().Allocations(jobID, *all, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying the allocations of job %q", jobID), err)
	}
	if len(allocs) == 0 {
		fmt.Fprintln(m.stdout, "No allocations placed")
		return exitOK
	}
	fmt.Fprint(m.stdout, formatAllocList(allocs, m.now(), *verbose, false))
	return exitOK
}
