package command

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

func runDeploymentStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("deployment status", "[options] <deployment>", `
Show a deployment, named by its ID or a unique prefix of it: its job and
version, its status, and per task group how many allocations it wants,
has placed, and found healthy or unhealthy, and by when the group must
make progress (progress_deadline).`)
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
	fmt.Fprint(m.stdout, formatDeploymentStatus(d, *verbose))
	return exitOK
}

// formatDeploymentStatus renders a deployment as `deployment status`
// shows it.
func formatDeploymentStatus(d *api.Deployment, verbose bool) string {
	var b strings.Builder
	b.WriteString(formatKV([]kv{
		{"ID", shortID(d.ID, verbose)},
		{"Job ID", d.JobID},
		{"Job Version", strconv.FormatUint(d.JobVersion, 10)},
		{"Status", d.Status},
		{"Description", d.StatusDescription},
	}))
	b.WriteString(formatDeployed(d))
	return b.String()
}
