package command

import (
	"fmt"

	"github.com/drover-io/drover/api"
)

func runStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("status", "[options] [id-prefix]", `
Display the status of what an ID or ID prefix names. Without an argument,
list the jobs. With one, look for jobs, allocations and nodes whose ID
starts with it: one match shows that job, allocation or node (as job
status, alloc status and node status do); several are listed.`)
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "this command takes at most one argument: an ID prefix")
	}
	c := m.apiClient()
	if c == nil {
		return 1
	}
	if fset.NArg() == 0 {
		return m.listJobs(c)
	}
	prefix := fset.Arg(0)
	q := &api.QueryOptions{Prefix: prefix}
	jobs, _, err := c.Jobs().List(q)
	if err != nil {
		return m.fail("querying jobs", err)
	}
	for _, j := range jobs {
		if j.ID == prefix { // an exact job ID wins over longer IDs it prefixes
			return m.showJob(c, j.ID, *verbose, false, false)
		}
	}
	allocs, _, err := c.Allocations().List(q)
	if err != nil {
		return m.fail("querying allocations", err)
	}
	nodes, _, err := c.Nodes().List(q)
	if err != nil {
		return m.fail("querying nodes", err)
	}
	switch {
	case len(jobs)+len(allocs)+len(nodes) == 0:
		fmt.Fprintf(m.stderr, "No job, allocation or node with prefix or ID %q found\n", prefix)
		return 1
	case len(jobs) == 1 && len(allocs)+len(nodes) == 0:
		return m.showJob(c, jobs[0].ID, *verbose, false, false)
	case len(allocs) == 1 && len(jobs)+len(nodes) == 0:
		return m.showAlloc(c, allocs[0].ID, *verbose)
	case len(nodes) == 1 && len(jobs)+len(allocs) == 0:
		node, _, err := c.Nodes().Info(nodes[0].ID, nil)
		if err != nil {
			return m.fail("querying node", err)
		}
		nallocs, _, err := c.Nodes().Allocations(node.ID, nil)
		if err != nil {
			return m.fail("querying the node's allocations", err)
		}
		fmt.Fprint(m.stdout, formatNodeStatus(node, nallocs, m.now(), *verbose))
		return 0
	}
	fmt.Fprintf(m.stdout, "Prefix %q matched several objects; use a longer prefix.\n", prefix)
	if len(jobs) > 0 {
		fmt.Fprintf(m.stdout, "\nJobs\n%s", formatJobList(jobs))
	}
	if len(allocs) > 0 {
		fmt.Fprintf(m.stdout, "\nAllocations\n%s", formatAllocList(allocs, m.now(), *verbose, false))
	}
	if len(nodes) > 0 {
		fmt.Fprintf(m.stdout, "\nNodes\n%s", formatNodeList(nodes, *verbose))
	}
	return 1
}
