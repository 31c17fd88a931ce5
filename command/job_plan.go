package command

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/drover-io/drover/api"
)

// Exit codes of `job plan`, as Nomad's.
const (
	exitPlanNoChange = 0
	exitPlanChanges  = 1
	exitPlanError    = 255
)

func runJobPlan(m *Meta, args []string) int {
	fset := m.apiFlagSet("job plan", "[options] <file>", `
Show what running a job file would do, without changing anything: the
difference from the job's current version (+ added, - deleted, +/- edited)
and the scheduler's dry run (allocations to create, update in place,
replace or stop; placement failures; allocations to preempt).

The output ends with the job's modify index: "drover job run -check-index
N <file>" then submits the job only if nobody changed it in between.

Exit codes: 0 when no allocations would be created, replaced or stopped,
1 when some would be, 255 on errors.`)
	diff := fset.Bool("diff", true, "Show the difference from the current version.")
	jv := addVarFlags(fset)
	verbose := fset.Bool("verbose", false, "Also show, per task group, the scores of the nodes its first placement would choose from (job_plan_scores.go).")
	if code, done := m.parse(fset, args); done {
		if code != 0 {
			return exitPlanError
		}
		return code
	}
	if fset.NArg() != 1 {
		m.usageError(fset, "this command takes one argument: the job file")
		return exitPlanError
	}
	path := fset.Arg(0)
	job, ok := m.readJob(path, jv)
	if !ok {
		return exitPlanError
	}
	c := m.apiClient()
	if c == nil {
		return exitPlanError
	}
	resp, _, err := c.Jobs().Plan(job, *diff, nil)
	if err != nil {
		m.fail("during plan", err)
		return exitPlanError
	}
	if resp.Diff != nil {
		fmt.Fprint(m.stdout, formatJobDiff(resp.Diff))
		fmt.Fprintln(m.stdout)
	}
	fmt.Fprint(m.stdout, formatDryRun(resp))
	if *verbose {
		fmt.Fprint(m.stdout, formatPlanScores(resp.PlacementMetrics, nodeClasses(c)))
	}
	if w := strings.TrimSpace(resp.Warnings); w != "" {
		fmt.Fprintf(m.stdout, "\nJob Warnings:\n%s\n", w)
	}
	fmt.Fprintf(m.stdout, `
Job Modify Index: %d
To submit the job with version verification run:

drover job run -check-index %d %s

When running the job with the check-index flag, the job will only be run if the
job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.
`, resp.JobModifyIndex, resp.JobModifyIndex, path)
	return planExitCode(resp)
}

// planExitCode is 1 when the plan creates, replaces, stops or preempts
// allocations, 0 otherwise (in-place updates alone change nothing that
// runs).
func planExitCode(resp *api.JobPlanResponse) int {
	if resp.Annotations == nil {
		return exitPlanNoChange
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary+u.Preemptions > 0 {
			return exitPlanChanges
		}
	}
	return exitPlanNoChange
}

// formatDryRun renders the scheduler's dry run.
func formatDryRun(resp *api.JobPlanResponse) string {
	var b strings.Builder
	b.WriteString("Scheduler dry-run:\n")
	if len(resp.FailedTGAllocs) == 0 {
		b.WriteString("- All tasks successfully allocated.\n")
	} else {
		b.WriteString("- WARNING: Failed to place all allocations.\n")
		b.WriteString(placementFailures(resp.FailedTGAllocs, "  "))
	}
	if resp.Annotations != nil && len(resp.Annotations.PreemptedAllocs) > 0 {
		b.WriteString("\nPreemptions:\n\n")
		rows := make([][]string, 0, len(resp.Annotations.PreemptedAllocs))
		for _, a := range resp.Annotations.PreemptedAllocs {
			rows = append(rows, []string{shortID(a.ID, false), a.JobID, shortID(a.NodeID, false), a.TaskGroup})
		}
		b.WriteString(formatTable([]string{"Alloc ID", "Job ID", "Node ID", "Task Group"}, rows))
	}
	return b.String()
}

// diffMarker is the prefix of a diff line of the given type.
func diffMarker(typ string) string {
	switch typ {
	case "Added":
		return "+"
	case "Deleted":
		return "-"
	case "Edited":
		return "+/-"
	}
	return ""
}

// formatJobDiff renders a job diff as `nomad job plan` does.
func formatJobDiff(d *api.JobDiff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", marked(d.Type, fmt.Sprintf("Job: %q", d.ID)))
	writeFields(&b, d.Fields, "")
	writeObjects(&b, d.Objects, "")
	for _, g := range d.TaskGroups {
		header := fmt.Sprintf("Task Group: %q", g.Name)
		if u := formatUpdates(g.Updates); u != "" {
			header += " (" + u + ")"
		}
		fmt.Fprintf(&b, "%s\n", marked(g.Type, header))
		writeFields(&b, g.Fields, "  ")
		writeObjects(&b, g.Objects, "  ")
		for _, t := range g.Tasks {
			if t.Type == "None" {
				continue
			}
			header := fmt.Sprintf("Task: %q", t.Name)
			if len(t.Annotations) > 0 {
				header += " (" + strings.Join(t.Annotations, ", ") + ")"
			}
			fmt.Fprintf(&b, "  %s\n", marked(t.Type, header))
			writeFields(&b, t.Fields, "    ")
			writeObjects(&b, t.Objects, "    ")
		}
	}
	return b.String()
}

// marked prefixes s with the diff marker of typ, or aligns it when none.
func marked(typ, s string) string {
	if m := diffMarker(typ); m != "" {
		return m + " " + s
	}
	return s
}

func writeFields(w io.Writer, fields []*api.FieldDiff, indent string) {
	for _, f := range fields {
		switch f.Type {
		case "Added":
			fmt.Fprintf(w, "%s+ %s: %q\n", indent, f.Name, f.New)
		case "Deleted":
			fmt.Fprintf(w, "%s- %s: %q\n", indent, f.Name, f.Old)
		case "Edited":
			fmt.Fprintf(w, "%s+/- %s: %q => %q\n", indent, f.Name, f.Old, f.New)
		default:
			fmt.Fprintf(w, "%s  %s: %q\n", indent, f.Name, f.New)
		}
	}
}

func writeObjects(w io.Writer, objs []*api.ObjectDiff, indent string) {
	for _, o := range objs {
		fmt.Fprintf(w, "%s%s {\n", indent, marked(o.Type, o.Name))
		writeFields(w, o.Fields, indent+"  ")
		writeObjects(w, o.Objects, indent+"  ")
		fmt.Fprintf(w, "%s}\n", indent)
	}
}

// formatUpdates renders a group's update counts: "1 create, 2 ignore".
func formatUpdates(u map[string]uint64) string {
	keys := make([]string, 0, len(u))
	for k := range u {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", u[k], k))
	}
	return strings.Join(parts, ", ")
}
