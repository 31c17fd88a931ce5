package command

import (
	"fmt"
	"strconv"

	"github.com/drover-io/drover/api"
)

func runDeploymentList(m *Meta, args []string) int {
	fset := m.apiFlagSet("deployment list", "[options]", `
List the deployments (rolling updates of jobs to new versions), newest
first.`)
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
	ds, _, err := c.Deployments().List(nil)
	if err != nil {
		return m.fail("retrieving deployments", err)
	}
	if len(ds) == 0 {
		fmt.Fprintln(m.stdout, "No deployments found")
		return exitOK
	}
	fmt.Fprint(m.stdout, formatDeploymentList(ds, *verbose))
	return exitOK
}

// formatDeploymentList renders deployments as `deployment list` shows them.
func formatDeploymentList(ds []*api.Deployment, verbose bool) string {
	rows := make([][]string, 0, len(ds))
	for _, d := range ds {
		rows = append(rows, []string{shortID(d.ID, verbose), d.JobID, strconv.FormatUint(d.JobVersion, 10), d.Status, d.StatusDescription})
	}
	return formatTable([]string{"ID", "Job ID", "Job Version", "Status", "Description"}, rows)
}
