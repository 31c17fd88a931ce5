package command

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

func runNodeStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("node status", "[options] [node]", `
Display the status of client nodes. Without an argument, list every node.
With a node ID (or a unique prefix of one), show the node: its settings,
its drivers and their health, its resources and what is allocated of them,
and its allocations.`)
	verbose := fset.Bool("verbose", false, "Show full IDs and the node's attributes.")
	stats := fset.Bool("stats", false, "Show the node's host statistics (CPU, memory, alloc dir disk, uptime) and device statistics.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "this command takes at most one argument: the node ID")
	}
	c := m.apiClient()
	if c == nil {
		return 1
	}
	if fset.NArg() == 0 {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return m.fail("querying nodes", err)
		}
		if len(nodes) == 0 {
			fmt.Fprintln(m.stdout, "No nodes registered")
			return 0
		}
		fmt.Fprint(m.stdout, formatNodeList(nodes, *verbose))
		return 0
	}
	nodeID, code := m.resolveNode(c, fset.Arg(0), *verbose)
	if nodeID == "" {
		return code
	}
	node, _, err := c.Nodes().Info(nodeID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying node %q", nodeID), err)
	}
	allocs, _, err := c.Nodes().Allocations(nodeID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying the allocations of node %q", nodeID), err)
	}
	fmt.Fprint(m.stdout, formatNodeStatus(node, allocs, m.now(), *verbose))
	if *stats {
		return m.showNodeStats(c, nodeID)
	}
	return 0
}

// resolveNode turns a node ID prefix into the node's ID. On failure it
// prints why and returns "" and the exit code.
func (m *Meta) resolveNode(c *api.Client, prefix string, verbose bool) (string, int) {
	nodes, _, err := c.Nodes().List(&api.QueryOptions{Prefix: prefix})
	if err != nil {
		return "", m.fail("querying nodes", err)
	}
	for _, n := range nodes {
		if n.ID == prefix {
			return n.ID, 0
		}
	}
	switch len(nodes) {
	case 0:
		fmt.Fprintf(m.stderr, "No node(s) with prefix or ID %q found (list them with `drover node status`)\n", prefix)
		return "", 1
	case 1:
		return nodes[0].ID, 0
	}
	fmt.Fprintf(m.stdout, "Prefix matched multiple nodes\n\n%s", formatNodeList(nodes, verbose))
	return "", 1
}

// formatNodeList renders the table of `node status` without arguments.
func formatNodeList(nodes []*api.NodeListStub, verbose bool) string {
	rows := make([][]string, 0, len(nodes))
	for _, n := range nodes {
		rows = append(rows, []string{
			shortID(n.ID, verbose), orNone(n.NodePool), n.Datacenter, n.Name, orNone(n.NodeClass),
			strconv.FormatBool(n.Drain), n.SchedulingEligibility, n.Status,
		})
	}
	return formatTable([]string{"ID", "Node Pool", "DC", "Name", "Class", "Drain", "Eligibility", "Status"}, rows)
}

// formatNodeStatus renders one node with its allocations as of now.
func formatNodeStatus(n *api.Node, allocs []*api.Allocation, now time.Time, verbose bool) string {
	var b strings.Builder
	var healthy []string
	for _, d := range sortedKeys(n.Drivers) {
		if di := n.Drivers[d]; di.Detected && di.Healthy {
			healthy = append(healthy, d)
		}
	}
	b.WriteString(formatKV([]kv{
		{"ID", shortID(n.ID, verbose)},
		{"Name", n.Name},
		{"Node Pool", n.NodePool},
		{"Class", n.NodeClass},
		{"DC", n.Datacenter},
		{"Address", n.HTTPAddr},
		{"Drain", strconv.FormatBool(n.Drain)},
		{"Eligibility", n.SchedulingEligibility},
		{"Status", n.Status},
		{"Status Description", n.StatusDescription},
		{"Drivers", strings.Join(healthy, ",")},
	}))

	b.WriteString("\nDrivers\n")
	var drows [][]string
	for _, d := range sortedKeys(n.Drivers) {
		di := n.Drivers[d]
		drows = append(drows, []string{d, strconv.FormatBool(di.Detected), strconv.FormatBool(di.Healthy),
			orNone(di.HealthDescription), formatTime(di.UpdateTime)})
	}
	b.WriteString(formatTable([]string{"Driver", "Detected", "Healthy", "Message", "Time"}, drows))
	b.WriteString(formatNodeDevices(n))
	b.WriteString(formatHostVolumes(n, verbose)) // node_volumes.go

	if r := n.NodeResources; r != nil {
		var cpu, mem, disk int64
		for _, a := range allocs {
			if a.ClientStatus == api.AllocClientStatusComplete || a.ClientStatus == api.AllocClientStatusFailed ||
				a.ClientStatus == api.AllocClientStatusLost || a.DesiredStatus != api.AllocDesiredStatusRun {
				continue
			}
			if ar := a.AllocatedResources; ar != nil {
				for _, t := range ar.Tasks {
					cpu += t.Cpu.CpuShares
					mem += t.Memory.MemoryMB
				}
				disk += ar.Shared.DiskMB
			}
		}
		b.WriteString("\nAllocated Resources\n")
		b.WriteString(formatTable([]string{"CPU", "Memory", "Disk"}, [][]string{{
			fmt.Sprintf("%d/%d MHz", cpu, r.Cpu.CpuShares),
			formatMB(mem) + "/" + formatMB(r.Memory.MemoryMB),
			formatMB(disk) + "/" + formatMB(r.Disk.DiskMB),
		}}))
	}

	if verbose {
		b.WriteString(formatNodeNetworks(n)) // network_format.go
	}
	if verbose && len(n.Attributes) > 0 {
		b.WriteString("\nAttributes\n")
		var attrs []kv
		for _, k := range sortedKeys(n.Attributes) {
			attrs = append(attrs, kv{k, n.Attributes[k]})
		}
		b.WriteString(formatKV(attrs))
	}
	if verbose && len(n.Meta) > 0 {
		// The servers' copy: dynamic metadata arrives here once the
		// node's client has sent it (drover node meta read asks the
		// client itself).
		b.WriteString("\nMeta\n")
		var meta []kv
		for _, k := range sortedKeys(n.Meta) {
			meta = append(meta, kv{k, n.Meta[k]})
		}
		b.WriteString(formatKV(meta))
	}

	b.WriteString("\nAllocations\n")
	if len(allocs) == 0 {
		b.WriteString("No allocations placed\n")
		return b.String()
	}
	stubs := make([]*api.AllocationListStub, 0, len(allocs))
	for _, a := range allocs {
		var version uint64
		if a.Job != nil && a.Job.Version != nil {
			version = *a.Job.Version
		}
		stubs = append(stubs, &api.AllocationListStub{
			ID: a.ID, JobID: a.JobID, JobVersion: version, TaskGroup: a.TaskGroup, NodeID: a.NodeID,
			DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
		})
	}
	b.WriteString(formatAllocList(stubs, now, verbose, true))
	return b.String()
}
