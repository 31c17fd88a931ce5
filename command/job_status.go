package command

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

func runJobStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("job status", "[options] [job]", `
Display the status of jobs. Without an argument, list every job. With a
job ID (or a unique prefix of one), show that job: its settings, a summary
of its allocations per task group, why allocations could not be placed if
the latest evaluation failed to place some, and its allocations.`)
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	all := fset.Bool("all-allocs", false, "Show the allocations of earlier versions of the job too.")
	evals := fset.Bool("evals", false, "Show the job's evaluations too.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "this command takes at most one argument: the job ID")
	}
	c := m.apiClient()
	if c == nil {
		return 1
	}
	if fset.NArg() == 0 {
		return m.listJobs(c)
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), *verbose)
	if jobID == "" {
		return code
	}
	return m.showJob(c, jobID, *verbose, *all, *evals)
}

// listJobs prints the table of all jobs.
func (m *Meta) listJobs(c *api.Client) int {
	jobs, _, err := c.Jobs().List(nil)
	if err != nil {
		return m.fail("querying jobs", err)
	}
	if len(jobs) == 0 {
		fmt.Fprintln(m.stdout, "No running jobs")
		return 0
	}
	fmt.Fprint(m.stdout, formatJobList(jobs))
	return 0
}

// resolveJob turns a job ID or unique prefix into the job's ID. On failure
// it prints why and returns "" and the exit code.
func (m *Meta) resolveJob(c *api.Client, prefix string, verbose bool) (string, int) {
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: prefix})
	if err != nil {
		return "", m.fail("querying jobs", err)
	}
	for _, j := range jobs {
		if j.ID == prefix {
			return j.ID, 0
		}
	}
	switch len(jobs) {
	case 0:
		fmt.Fprintf(m.stderr, "No job(s) with prefix or ID %q found (list them with `drover job status`)\n", prefix)
		return "", 1
	case 1:
		return jobs[0].ID, 0
	}
	fmt.Fprintf(m.stdout, "Prefix matched multiple jobs\n\n%s", formatJobList(jobs))
	return "", 1
}

// showJob prints one job's status.
func (m *Meta) showJob(c *api.Client, jobID string, verbose, all, showEvals bool) int {
	doing := fmt.Sprintf("querying job %q", jobID)
	job, _, err := c.Jobs().Info(jobID, nil)
	if err != nil {
		return m.fail(doing, err)
	}
	summary, _, err := c.Jobs().Summary(jobID, nil)
	if err != nil {
		return m.fail(doing+" summary", err)
	}
	evals, _, err := c.Jobs().Evaluations(jobID, nil)
	if err != nil {
		return m.fail(doing+" evaluations", err)
	}
	allocs, _, err := c.Jobs().Allocations(jobID, all, nil)
	if err != nil {
		return m.fail(doing+" allocations", err)
	}
	if isTemplateJob(job) { // job_periodic.go
		children, err := childJobs(c, jobID)
		if err != nil {
			return m.fail(doing+" children", err)
		}
		fmt.Fprint(m.stdout, formatJobStatus(jobStatus{Job: job, Children: children, Template: true}, m.now(), verbose))
		return 0
	}
	// An agent without deployments (or an older one) answers an error:
	// the section is left out.
	dep, _, _ := c.Jobs().LatestDeployment(jobID, nil)
	fmt.Fprint(m.stdout, formatJobStatus(jobStatus{
		Job: job, Summary: summary, Evals: evals, Allocs: allocs, Deployment: dep, ShowEvals: showEvals,
	}, m.now(), verbose))
	return 0
}

// formatJobList renders the table of `job status` without arguments.
func formatJobList(jobs []*api.JobListStub) string {
	rows := make([][]string, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, []string{
			j.ID, j.Type, strconv.Itoa(j.Priority), jobStatusText(j.Status, j.Stop), formatUnixNano(j.SubmitTime),
		})
	}
	return formatTable([]string{"ID", "Type", "Priority", "Status", "Submit Date"}, rows)
}

func jobStatusText(status string, stopped bool) string {
	if stopped {
		return status + " (stopped)"
	}
	return status
}

// jobStatus is everything `job status <job>` shows.
type jobStatus struct {
	Job     *api.Job
	Summary *api.JobSummary
	Evals   []*api.Evaluation // newest first
	Allocs  []*api.AllocationListStub
	// Deployment is the job's latest deployment; nil when none.
	Deployment *api.Deployment
	// ShowEvals adds the table of the evaluations (-evals).
	ShowEvals bool
	// Template: a periodic or parameterized job, shown with its Children
	// instead of its summary and allocations.
	Template bool
	Children []*api.JobListStub
}

// formatJobStatus renders one job's status as of now.
func formatJobStatus(s jobStatus, now time.Time, verbose bool) string {
	j := s.Job
	var b strings.Builder
	submit := "<none>"
	if j.SubmitTime != nil {
		submit = formatUnixNano(*j.SubmitTime)
	}
	stopped := j.Stop != nil && *j.Stop
	var extra []kv
	var rest string
	if s.Template {
		extra, rest = formatTemplateJob(j, s.Children, now) // job_periodic.go
	}
	b.WriteString(formatKV(append([]kv{
		{"ID", derefString(j.ID)},
		{"Name", derefString(j.Name)},
		{"Submit Date", submit},
		{"Type", derefString(j.Type)},
		{"Priority", strconv.Itoa(derefInt(j.Priority))},
		{"Datacenters", strings.Join(j.Datacenters, ",")},
		{"Namespace", derefString(j.Namespace)},
		{"Status", jobStatusText(derefString(j.Status), stopped)},
	}, extra...)))
	if s.Template {
		return b.String() + rest
	}

	b.WriteString("\nSummary\n")
	b.WriteString(formatJobSummary(j, s.Summary))

	if d := s.Deployment; d != nil {
		b.WriteString("\nLatest Deployment\n")
		b.WriteString(formatDeployment(d, verbose))
	}

	if failed := latestPlacementFailures(s.Evals); len(failed) > 0 {
		b.WriteString("\nPlacement Failure\n")
		b.WriteString(placementFailures(failed, ""))
	}

	if s.ShowEvals {
		b.WriteString("\nEvaluations\n")
		b.WriteString(formatEvalList(s.Evals, verbose))
	}

	b.WriteString("\nAllocations\n")
	if len(s.Allocs) == 0 {
		b.WriteString("No allocations placed\n")
	} else {
		b.WriteString(formatAllocList(s.Allocs, now, verbose, false))
	}
	return b.String()
}

// formatJobSummary renders the per-group counts, in the job's group order.
func formatJobSummary(j *api.Job, s *api.JobSummary) string {
	var groups []string
	seen := map[string]bool{}
	for _, tg := range j.TaskGroups {
		if n := derefString(tg.Name); !seen[n] {
			groups = append(groups, n)
			seen[n] = true
		}
	}
	if s != nil {
		for _, g := range sortedKeys(s.Summary) {
			if !seen[g] {
				groups = append(groups, g)
			}
		}
	}
	rows := make([][]string, 0, len(groups))
	for _, g := range groups {
		var c api.TaskGroupSummary
		if s != nil {
			c = s.Summary[g]
		}
		rows = append(rows, []string{g,
			strconv.Itoa(c.Queued), strconv.Itoa(c.Starting), strconv.Itoa(c.Running),
			strconv.Itoa(c.Failed), strconv.Itoa(c.Complete), strconv.Itoa(c.Lost), strconv.Itoa(c.Unknown)})
	}
	return formatTable([]string{"Task Group", "Queued", "Starting", "Running", "Failed", "Complete", "Lost", "Unknown"}, rows)
}

// latestPlacementFailures returns the failed placements of the newest
// evaluation the scheduler processed. Blocked evaluations, which only wait
// to retry, are skipped.
func latestPlacementFailures(evals []*api.Evaluation) map[string]*api.AllocationMetric {
	for _, e := range evals {
		if e.Status == api.EvalStatusBlocked {
			continue
		}
		return e.FailedTGAllocs
	}
	return nil
}

// formatAllocList renders allocations as a table. withJob adds the job's
// column (for node status).
func formatAllocList(allocs []*api.AllocationListStub, now time.Time, verbose, withJob bool) string {
	header := []string{"ID", "Node ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}
	if withJob {
		header = []string{"ID", "Job ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"}
	}
	rows := make([][]string, 0, len(allocs))
	for _, a := range allocs {
		second := shortID(a.NodeID, verbose)
		if withJob {
			second = a.JobID
		}
		rows = append(rows, []string{
			shortID(a.ID, verbose), second, a.TaskGroup, strconv.FormatUint(a.JobVersion, 10),
			a.DesiredStatus, a.ClientStatus, timeAgoNano(a.CreateTime, now), timeAgoNano(a.ModifyTime, now),
		})
	}
	return formatTable(header, rows)
}

// formatDeployment renders a deployment as `job status` shows it.
func formatDeployment(d *api.Deployment, verbose bool) string {
	var b strings.Builder
	b.WriteString(formatKV([]kv{
		{"ID", shortID(d.ID, verbose)},
		{"Status", d.Status},
		{"Description", d.StatusDescription},
	}))
	b.WriteString(formatDeployed(d))
	return b.String()
}

// formatDeployed renders the "Deployed" table of a deployment: one row per
// task group.
func formatDeployed(d *api.Deployment) string {
	var b strings.Builder
	groups := sortedKeys(d.TaskGroups)
	canaries := false
	for _, g := range groups {
		canaries = canaries || d.TaskGroups[g].DesiredCanaries > 0
	}
	rows := make([][]string, 0, len(groups))
	for _, g := range groups {
		st := d.TaskGroups[g]
		row := []string{g, strconv.FormatBool(st.AutoRevert)}
		if canaries {
			row = append(row, strconv.FormatBool(st.Promoted))
		}
		row = append(row, strconv.Itoa(st.DesiredTotal))
		if canaries {
			row = append(row, strconv.Itoa(st.DesiredCanaries))
		}
		rows = append(rows, append(row, strconv.Itoa(st.PlacedAllocs), strconv.Itoa(st.HealthyAllocs),
			strconv.Itoa(st.UnhealthyAllocs), formatTime(st.RequireProgressBy)))
	}
	header := []string{"Task Group", "Auto Revert"}
	if canaries {
		// Nomad's columns for a deployment with canaries.
		header = append(header, "Promoted", "Desired", "Canaries")
	} else {
		header = append(header, "Desired")
	}
	header = append(header, "Placed", "Healthy", "Unhealthy", "Progress Deadline")
	b.WriteString("\nDeployed\n")
	b.WriteString(formatTable(header, rows))
	return b.String()
}

// formatEvalList renders evaluations as `job status -evals` shows them.
func formatEvalList(evals []*api.Evaluation, verbose bool) string {
	if len(evals) == 0 {
		return "No evaluations\n"
	}
	rows := make([][]string, 0, len(evals))
	for _, e := range evals {
		rows = append(rows, []string{shortID(e.ID, verbose), strconv.Itoa(e.Priority), e.TriggeredBy, e.Status,
			strconv.FormatBool(len(e.FailedTGAllocs) > 0)})
	}
	return formatTable([]string{"ID", "Priority", "Triggered By", "Status", "Placement Failures"}, rows)
}
