package command

import (
	"encoding/json"
	"fmt"
)

func runJobInspect(m *Meta, args []string) int {
	fset := m.apiFlagSet("job inspect", "[options] <job>", `
Print a job as the server stores it, with every default filled in, as
JSON: {"Job": {...}}. The output can be submitted back to PUT /v1/jobs.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	c := m.apiClient()
	if c == nil {
		return 1
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), false)
	if jobID == "" {
		return code
	}
	job, _, err := c.Jobs().Info(jobID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("inspecting job %q", jobID), err)
	}
	out, err := json.MarshalIndent(map[string]any{"Job": job}, "", "    ")
	if err != nil {
		return m.fail("encoding the job", err)
	}
	fmt.Fprintln(m.stdout, string(out))
	return 0
}
