package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

func runNodeDrain(m *Meta, args []string) int {
	fset := m.apiFlagSet("node drain", "[options] <node>", `
Start or stop a node's drain. A draining node takes no new allocations;
the servers move its allocations to other nodes, a few at a time as each
group's migrate block allows (max_parallel, default 1), each waiting until
its replacement is healthy. Batch allocations are left to finish until the
deadline; system jobs' allocations go last. When nothing is left to move,
the drain ends and the node stays ineligible (make it eligible again with
-disable, or with drover node eligibility -enable).

One of -enable or -disable is required. The node is an ID or a unique ID
prefix, or -self for this agent's node. The command does not ask for
confirmation (-yes is accepted for Nomad's scripts).`)
	enable := fset.Bool("enable", false, "Start draining the node.")
	disable := fset.Bool("disable", false, "Stop draining the node (makes it eligible unless -keep-ineligible).")
	deadline := fset.Duration("deadline", time.Hour, "Stop what is left on the node after this long (-enable).")
	force := fset.Bool("force", false, "Stop every allocation now, without waiting for migrations (a deadline of now).")
	noDeadline := fset.Bool("no-deadline", false, "Drain without a deadline: wait for every migration and batch allocation.")
	ignoreSystem := fset.Bool("ignore-system", false, "Leave the system jobs' allocations running on the node.")
	keepIneligible := fset.Bool("keep-ineligible", false, "With -disable: leave the node ineligible.")
	monitor := fset.Bool("monitor", false, "Follow the drain until it completes (Ctrl-C stops following, not the drain).")
	detach := fset.Bool("detach", false, "Return at once after starting the drain (the default unless -monitor).")
	self := fset.Bool("self", false, "Drain this agent's node.")
	fset.Bool("yes", false, "Do not ask for confirmation (the command never asks).")
	var meta kvFlag
	fset.Var(&meta, "meta", "Record key=value with the drain (repeatable).")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	switch {
	case *enable == *disable && !*monitor:
		return m.usageError(fset, "give one of -enable or -disable (or -monitor alone to follow a drain)")
	case *enable && *disable:
		return m.usageError(fset, "give -enable or -disable, not both")
	case *self && fset.NArg() != 0, !*self && fset.NArg() != 1:
		return m.usageError(fset, "give one node ID, or -self")
	case *force && *noDeadline:
		return m.usageError(fset, "-force and -no-deadline contradict each other")
	case *deadline <= 0 && !*noDeadline && !*force && *enable:
		return m.usageError(fset, "-deadline must be positive: use -no-deadline for none, -force for now")
	case *detach && *monitor:
		return m.usageError(fset, "-detach and -monitor contradict each other")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	nodeID, code := m.nodeArg(c, fset, *self, *verbose)
	if nodeID == "" {
		return code
	}
	if *enable || *disable {
		req := &api.NodeUpdateDrainRequest{MarkEligible: *disable && !*keepIneligible, Meta: meta.m}
		if *enable {
			spec := &api.DrainSpec{Deadline: *deadline, IgnoreSystemJobs: *ignoreSystem}
			switch {
			case *force:
				spec.Deadline = -1
			case *noDeadline:
				spec.Deadline = 0
			}
			req.DrainSpec = spec
		}
		if _, err := c.Nodes().UpdateDrainOpts(nodeID, req, nil); err != nil {
			return m.fail(fmt.Sprintf("updating the drain of node %q", nodeID), err)
		}
		if *enable {
			fmt.Fprintf(m.stdout, "Node %q drain strategy set\n", nodeID)
		} else {
			fmt.Fprintf(m.stdout, "Node %q drain strategy unset\n", nodeID)
		}
	}
	if *monitor {
		return m.monitorDrain(c, nodeID, *verbose)
	}
	return exitOK
}

// nodeArg resolves the node argument, or this agent's node with self.
func (m *Meta) nodeArg(c *api.Client, fset *flagSet, self, verbose bool) (string, int) {
	if !self {
		return m.resolveNode(c, fset.Arg(0), verbose)
	}
	info, err := c.Agent().Self()
	if err != nil {
		return "", m.fail("querying the agent", err)
	}
	id := info.Stats["client"]["node_id"]
	if id == "" {
		fmt.Fprintln(m.stderr, "Error: -self: this agent runs no client; name the node instead")
		return "", exitError
	}
	return id, exitOK
}

// monitorDrain prints the drain's progress (allocations marked, stopped
// and finished on the node) until it completes, following its allocations
// with blocking queries and reading the node after each.
func (m *Meta) monitorDrain(c *api.Client, nodeID string, verbose bool) int {
	stamp := func(format string, args ...any) {
		fmt.Fprintf(m.stdout, "%s: %s\n", m.now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
	stamp("Ctrl-C to stop monitoring: it will not cancel the node drain")
	seen := map[string]string{} // alloc ID -> what was last printed of it
	var index uint64
	for {
		// The drain's end changes the node, not its allocations: the
		// blocking query on the allocations is kept short so that the
		// node is read again at least every two seconds.
		q := &api.QueryOptions{WaitIndex: index, WaitTime: 2 * time.Second}
		allocs, qm, err := c.Nodes().Allocations(nodeID, q)
		if err != nil {
			return m.fail(fmt.Sprintf("querying the allocations of node %q", nodeID), err)
		}
		sort.Slice(allocs, func(i, j int) bool { return allocs[i].ID < allocs[j].ID })
		for _, a := range allocs {
			now := drainAllocState(a)
			if now == "" || seen[a.ID] == now {
				continue
			}
			seen[a.ID] = now
			stamp("Alloc %q %s", shortID(a.ID, verbose), now)
		}
		node, _, err := c.Nodes().Info(nodeID, nil)
		if err != nil {
			return m.fail(fmt.Sprintf("querying node %q", nodeID), err)
		}
		if node.DrainStrategy == nil {
			if node.LastDrain != nil && node.LastDrain.Status == "canceled" {
				stamp("Drain of node %q canceled", nodeID)
				return exitOK
			}
			stamp("Drain complete for node %q", nodeID)
			return exitOK
		}
		if qm != nil && qm.LastIndex > index {
			index = qm.LastIndex
		}
	}
}

// drainAllocState is what the drain monitor says of an allocation now ("" for
// nothing to say).
func drainAllocState(a *api.Allocation) string {
	migrating := a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate
	switch {
	case a.ClientStatus == "complete" || a.ClientStatus == "failed" || a.ClientStatus == "lost":
		if migrating || a.DesiredStatus != "run" {
			return "stopped (" + a.ClientStatus + ")"
		}
		return ""
	case a.DesiredStatus != "run":
		return "draining"
	case migrating:
		return "marked for migration"
	}
	return ""
}

func runNodeEligibility(m *Meta, args []string) int {
	fset := m.apiFlagSet("node eligibility", "[options] <node>", `
Make a node eligible or ineligible for new allocations. An ineligible node
keeps what it runs. A draining node cannot be made eligible: stop its drain
with drover node drain -disable.`)
	enable := fset.Bool("enable", false, "Make the node eligible.")
	disable := fset.Bool("disable", false, "Make the node ineligible.")
	self := fset.Bool("self", false, "This agent's node.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	switch {
	case *enable == *disable:
		return m.usageError(fset, "give one of -enable or -disable")
	case *self && fset.NArg() != 0, !*self && fset.NArg() != 1:
		return m.usageError(fset, "give one node ID, or -self")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	nodeID, code := m.nodeArg(c, fset, *self, *verbose)
	if nodeID == "" {
		return code
	}
	if _, err := c.Nodes().ToggleEligibility(nodeID, *enable, nil); err != nil {
		return m.fail(fmt.Sprintf("updating the eligibility of node %q", nodeID), err)
	}
	if *enable {
		fmt.Fprintf(m.stdout, "Node %q scheduling eligibility set: eligible for scheduling\n", nodeID)
	} else {
		fmt.Fprintf(m.stdout, "Node %q scheduling eligibility set: ineligible for scheduling\n", nodeID)
	}
	return exitOK
}

func runSystemReconcileSummaries(m *Meta, args []string) int {
	fset := m.apiFlagSet("system reconcile summaries", "[options]", `
Recompute every job's summary (its allocations counted per group and
status) from its allocations.`)
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
	if err := c.System().ReconcileSummaries(); err != nil {
		return m.fail("reconciling job summaries", err)
	}
	fmt.Fprintln(m.stdout, "Reconciled job summaries")
	return exitOK
}

// kvFlag collects repeated key=value flags.
type kvFlag struct{ m map[string]string }

func (f *kvFlag) String() string { return fmt.Sprint(f.m) }

// Set adds one key=value.
func (f *kvFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	if f.m == nil {
		f.m = map[string]string{}
	}
	f.m[k] = val
	return nil
}
