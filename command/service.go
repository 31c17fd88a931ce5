package command

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/drover-io/drover/api"
)

// printJSON writes v indented, as -json asks.
func (m *Meta) printJSON(what string, v any) int {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		fmt.Fprintf(m.stderr, "Error encoding the %s: %v\n", what, err)
		return exitError
	}
	fmt.Fprintln(m.stdout, string(b))
	return exitOK
}

// formatTags renders tags as Nomad's CLI does: [a,b].
func formatTags(tags []string) string { return "[" + strings.Join(tags, ",") + "]" }

func runServiceList(m *Meta, args []string) int {
	fset := m.apiFlagSet("service list", "[options]", `
List the Nomad services registered in the namespace (-namespace=* for
every namespace), with the tags of their instances.`)
	asJSON := fset.Bool("json", false, "Print the services as JSON.")
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
	list, _, err := c.Services().List(nil)
	if err != nil {
		return m.fail("listing services", err)
	}
	if *asJSON {
		return m.printJSON("services", list)
	}
	allNS := len(list) > 1 || m.namespace == "*"
	var rows [][]string
	for _, ns := range list {
		for _, s := range ns.Services {
			if allNS {
				rows = append(rows, []string{s.ServiceName, ns.Namespace, formatTags(s.Tags)})
			} else {
				rows = append(rows, []string{s.ServiceName, formatTags(s.Tags)})
			}
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(m.stdout, "No service registrations found")
		return exitOK
	}
	header := []string{"Service Name", "Tags"}
	if allNS {
		header = []string{"Service Name", "Namespace", "Tags"}
	}
	fmt.Fprint(m.stdout, formatTable(header, rows))
	return exitOK
}

func runServiceInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("service info", "[options] <service>", `
Show the registered instances of a Nomad service: the job and allocation
each belongs to, its address and tags.`)
	asJSON := fset.Bool("json", false, "Print the instances as JSON.")
	verbose := fset.Bool("verbose", false, "Show full IDs and each instance's every field.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the service's name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	regs, _, err := c.Services().Get(fset.Arg(0), nil)
	if err != nil {
		return m.fail("reading the service", err)
	}
	if *asJSON {
		return m.printJSON("service", regs)
	}
	if len(regs) == 0 {
		fmt.Fprintln(m.stdout, "No service registrations found")
		return exitOK
	}
	if *verbose {
		for i, r := range regs {
			if i > 0 {
				fmt.Fprintln(m.stdout)
			}
			fmt.Fprint(m.stdout, formatKV([]kv{
				{"ID", r.ID}, {"Service Name", r.ServiceName}, {"Namespace", r.Namespace},
				{"Job ID", r.JobID}, {"Alloc ID", r.AllocID}, {"Node ID", r.NodeID}, {"Datacenter", r.Datacenter},
				{"Address", fmt.Sprintf("%s:%d", r.Address, r.Port)}, {"Tags", formatTags(r.Tags)},
			}))
		}
		return exitOK
	}
	rows := make([][]string, 0, len(regs))
	for _, r := range regs {
		rows = append(rows, []string{r.JobID, fmt.Sprintf("%s:%d", r.Address, r.Port), formatTags(r.Tags),
			shortID(r.NodeID, false), shortID(r.AllocID, false)})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Job ID", "Address", "Tags", "Node ID", "Alloc ID"}, rows))
	return exitOK
}

func runServiceDelete(m *Meta, args []string) int {
	fset := m.apiFlagSet("service delete", "[options] <service> <id>", `
Delete one registered instance of a Nomad service (its ID is shown by
"service info -verbose"). A running allocation registers its instances
again when its tasks restart.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 2 {
		return m.usageError(fset, "give the service's name and the instance's ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if _, err := c.Services().Delete(fset.Arg(0), fset.Arg(1), nil); err != nil {
		return m.fail("deleting the service registration", err)
	}
	fmt.Fprintln(m.stdout, "Successfully deleted service registration")
	return exitOK
}

// hasChecks reports whether an allocation's group has Nomad service
// checks (group or task services).
func hasChecks(a *api.Allocation) bool {
	if a.Job == nil {
		return false
	}
	for _, tg := range a.Job.TaskGroups {
		if tg == nil || tg.Name == nil || *tg.Name != a.TaskGroup {
			continue
		}
		services := slices.Clone(tg.Services)
		for _, t := range tg.Tasks {
			services = append(services, t.Services...)
		}
		for _, s := range services {
			if s != nil && s.Provider == "nomad" && len(s.Checks) > 0 {
				return true
			}
		}
	}
	return false
}

// formatChecks renders an allocation's check results as `alloc status`
// shows them, ordered by service, task and check.
func formatChecks(checks api.AllocCheckStatuses) string {
	rows := make([][]string, 0, len(checks))
	for _, st := range checks {
		task := st.Task
		if task == "" {
			task = "(group)"
		}
		rows = append(rows, []string{st.Service, task, st.Check, st.Mode, st.Status})
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
	return "Nomad Service Checks:\n" + formatTable([]string{"Service", "Task", "Name", "Mode", "Status"}, rows)
}
