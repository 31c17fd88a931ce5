package command

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// recentEvents is how many task events alloc status shows unless -verbose.
const recentEvents = 10

func runAllocStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc status", "[options] <alloc-id>", `
Display an allocation: where it runs, its client and desired status, and
for each task its state, its reserved resources and its recent events,
newest first, with times in UTC. The allocation may be named by a unique
prefix of its ID; an ambiguous prefix lists the allocations it matches.`)
	verbose := fset.Bool("verbose", false, "Show full IDs, every event, and the allocation's timeline (when each step from the job's registration to its task running, and of its stop, was reached).")
	stats := fset.Bool("stats", false, "Show the CPU, memory and device statistics of each task and of the allocation.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the allocation ID")
	}
	c := m.apiClient()
	if c == nil {
		return 1
	}
	allocID, code := m.resolveAlloc(c, fset.Arg(0), *verbose)
	if allocID == "" {
		return code
	}
	if code := m.showAlloc(c, allocID, *verbose); code != 0 || !*stats {
		return code
	}
	return m.showAllocStats(c, allocID)
}

// resolveAlloc turns an allocation ID prefix into the allocation's ID. On
// failure it prints why and returns "" and the exit code.
func (m *Meta) resolveAlloc(c *api.Client, prefix string, verbose bool) (string, int) {
	allocs, _, err := c.Allocations().List(&api.QueryOptions{Prefix: prefix})
	if err != nil {
		return "", m.fail("querying allocations", err)
	}
	for _, a := range allocs {
		if a.ID == prefix {
			return a.ID, 0
		}
	}
	switch len(allocs) {
	case 0:
		fmt.Fprintf(m.stderr, "No allocation(s) with prefix or ID %q found (see `drover job status <job>` for a job's allocations)\n", prefix)
		return "", 1
	case 1:
		return allocs[0].ID, 0
	}
	fmt.Fprintf(m.stdout, "Prefix matched multiple allocations\n\n%s", formatAllocList(allocs, m.now(), verbose, false))
	return "", 1
}

func (m *Meta) showAlloc(c *api.Client, allocID string, verbose bool) int {
	alloc, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying allocation %q", allocID), err)
	}
	var followup *api.Evaluation
	if alloc.FollowupEvalID != "" {
		// Best effort: without it the reschedule eligibility is left out.
		followup, _, _ = c.Evaluations().Info(alloc.FollowupEvalID, nil)
	}
	fmt.Fprint(m.stdout, formatAllocStatus(alloc, followup, m.now(), verbose))
	if verbose {
		m.showAllocTimeline(c, allocID)
	}
	if hasChecks(alloc) && alloc.ClientStatus == "running" {
		// Best effort: the node may be unreachable. (service.go)
		if checks, err := c.Allocations().Checks(alloc.ID, nil); err == nil && len(checks) > 0 {
			fmt.Fprint(m.stdout, "\n"+formatChecks(checks))
		}
	}
	return 0
}

// formatAllocStatus renders `alloc status` for one allocation as of now;
// followup is the allocation's pending reschedule evaluation, or nil.
func formatAllocStatus(a *api.Allocation, followup *api.Evaluation, now time.Time, verbose bool) string {
	var b strings.Builder
	var version string
	if a.Job != nil && a.Job.Version != nil {
		version = strconv.FormatUint(*a.Job.Version, 10)
	}
	b.WriteString(formatKV(append([]kv{
		{"ID", shortID(a.ID, verbose)},
		{"Eval ID", shortID(a.EvalID, verbose)},
		{"Name", a.Name},
		{"Node ID", shortID(a.NodeID, verbose)},
		{"Node Name", a.NodeName},
		{"Job ID", a.JobID},
		{"Job Version", version},
		{"Client Status", a.ClientStatus},
		{"Client Description", a.ClientDescription},
		{"Desired Status", a.DesiredStatus},
		{"Desired Description", a.DesiredDescription},
		{"Created", timeAgoNano(a.CreateTime, now)},
		{"Modified", timeAgoNano(a.ModifyTime, now)},
	}, rescheduleInfo(a, followup, now, verbose)...)))
	b.WriteString(formatAllocAddresses(a)) // network_format.go
	b.WriteString(formatNetworkStatus(a))
	if verbose {
		b.WriteString(formatPlacementMetrics(a.Metrics)) // placement_metrics.go
	}
	names := sortedKeys(a.TaskStates)
	if len(names) == 0 {
		b.WriteString("\nNo task has started yet\n")
	}
	for _, name := range names {
		b.WriteString("\n")
		b.WriteString(formatTaskStatus(a, name, a.TaskStates[name], verbose))
	}
	return b.String()
}

// formatTaskStatus renders one task of an allocation.
func formatTaskStatus(a *api.Allocation, name string, ts *api.TaskState, verbose bool) string {
	var b strings.Builder
	state := ""
	if ts != nil {
		state = ts.State
	}
	fmt.Fprintf(&b, "Task %q is %q\n", name, state)
	if ts == nil {
		return b.String()
	}
	if cpu, mem, disk, ok := taskResources(a, name); ok {
		b.WriteString("Task Resources:\n")
		header := []string{"CPU", "Memory", "Disk"}
		rows := [][]string{{fmt.Sprintf("%d MHz", cpu), formatMB(mem), formatMB(disk)}}
		if addrs := taskAddresses(a, name); len(addrs) > 0 { // network_format.go
			header = append(header, "Addresses")
			rows[0] = append(rows[0], addrs[0])
			for _, addr := range addrs[1:] {
				rows = append(rows, []string{"", "", "", addr})
			}
		}
		b.WriteString(formatTable(header, rows))
	}
	b.WriteString("\nTask Events:\n")
	b.WriteString(formatKV([]kv{
		{"Started At", formatTime(ts.StartedAt)},
		{"Finished At", formatTime(ts.FinishedAt)},
		{"Total Restarts", strconv.FormatUint(ts.Restarts, 10)},
		{"Last Restart", formatTime(ts.LastRestart)},
	}))
	b.WriteString("\nRecent Events:\n")
	b.WriteString(formatTaskEvents(ts.Events, verbose))
	return b.String()
}

// taskResources returns what the scheduler reserved for the task: CPU in
// MHz, memory and the group's disk in MB.
func taskResources(a *api.Allocation, task string) (cpu, mem, disk int64, ok bool) {
	if ar := a.AllocatedResources; ar != nil {
		if tr := ar.Tasks[task]; tr != nil {
			return tr.Cpu.CpuShares, tr.Memory.MemoryMB, ar.Shared.DiskMB, true
		}
	}
	if r := a.TaskResources[task]; r != nil {
		return int64(derefInt(r.CPU)), int64(derefInt(r.MemoryMB)), int64(derefInt(r.DiskMB)), true
	}
	return 0, 0, 0, false
}

// formatTaskEvents renders events (given oldest first) newest first; all
// of them when verbose, else the last recentEvents.
func formatTaskEvents(evs []*api.TaskEvent, verbose bool) string {
	start := 0
	if !verbose && len(evs) > recentEvents {
		start = len(evs) - recentEvents
	}
	rows := make([][]string, 0, len(evs)-start)
	for i := len(evs) - 1; i >= start; i-- {
		ev := evs[i]
		rows = append(rows, []string{formatUnixNano(ev.Time), ev.Type, eventDescription(ev)})
	}
	return formatTable([]string{"Time", "Type", "Description"}, rows)
}

// eventDescription is the event's display message, or what can be said
// from its fields when the agent sent none.
func eventDescription(ev *api.TaskEvent) string {
	if ev.DisplayMessage != "" {
		return ev.DisplayMessage
	}
	switch {
	case ev.Message != "":
		return ev.Message
	case ev.DriverError != "":
		return ev.DriverError
	case ev.SetupError != "":
		return ev.SetupError
	case ev.KillError != "":
		return ev.KillError
	case ev.RestartReason != "":
		return ev.RestartReason
	}
	return ""
}
