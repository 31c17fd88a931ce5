package command

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/drover-io/drover/api"
)

func runOperatorAutopilotGetConfig(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator autopilot get-config", "[options]", `
Show the autopilot configuration: whether dead servers are removed from
raft, and when a server counts as healthy.`)
	stale := fset.Bool("stale", false, "Let any server answer from its own state.")
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
	cfg, _, err := c.Operator().AutopilotGetConfiguration(&api.QueryOptions{AllowStale: *stale})
	if err != nil {
		return m.fail("querying the autopilot configuration", err)
	}
	fmt.Fprint(m.stdout, formatKV([]kv{
		{"CleanupDeadServers", strconv.FormatBool(cfg.CleanupDeadServers)},
		{"LastContactThreshold", cfg.LastContactThreshold.String()},
		{"MaxTrailingLogs", strconv.FormatUint(cfg.MaxTrailingLogs, 10)},
		{"MinQuorum", strconv.FormatUint(uint64(cfg.MinQuorum), 10)},
		{"ServerStabilizationTime", cfg.ServerStabilizationTime.String()},
		{"ModifyIndex", strconv.FormatUint(cfg.ModifyIndex, 10)},
	}))
	return exitOK
}

func runOperatorAutopilotSetConfig(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator autopilot set-config", "[options]", `
Change the autopilot configuration. Only the options given change; the rest
keep their current values. The change is refused if another one happened
between the read and the write (run it again).`)
	cleanup := fset.Bool("cleanup-dead-servers", false, "Remove servers that failed from raft (true or false).")
	lastContact := fset.Duration("last-contact-threshold", 0, "How long a server may go without contact with the leader and count as healthy.")
	trailing := fset.Uint64("max-trailing-logs", 0, "How many raft entries a server may lag the leader by and count as healthy.")
	minQuorum := fset.Uint("min-quorum", 0, "The number of voters below which autopilot removes no dead server.")
	stabilization := fset.Duration("server-stabilization-time", 0, "How long a server must be healthy to count as stable.")
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
	cfg, _, err := c.Operator().AutopilotGetConfiguration(nil)
	if err != nil {
		return m.fail("querying the autopilot configuration", err)
	}
	fset.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "cleanup-dead-servers":
			cfg.CleanupDeadServers = *cleanup
		case "last-contact-threshold":
			cfg.LastContactThreshold = *lastContact
		case "max-trailing-logs":
			cfg.MaxTrailingLogs = *trailing
		case "min-quorum":
			cfg.MinQuorum = *minQuorum
		case "server-stabilization-time":
			cfg.ServerStabilizationTime = *stabilization
		}
	})
	if *lastContact < 0 || *stabilization < 0 {
		return m.usageError(fset, "durations must not be negative")
	}
	ok, err := c.Operator().AutopilotSetConfiguration(cfg, true, nil)
	if err != nil {
		return m.fail("updating the autopilot configuration", err)
	}
	if !ok {
		fmt.Fprintln(m.stderr, "Autopilot configuration could not be atomically updated: it changed meanwhile. Run the command again.")
		return exitError
	}
	fmt.Fprintln(m.stdout, "Configuration updated!")
	return exitOK
}

func runOperatorAutopilotHealth(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator autopilot health", "[options]", `
Show the servers' health as the leader sees it, and how many servers the
cluster can lose without losing its quorum.`)
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
	h, err := c.Operator().AutopilotServerHealth(nil)
	if err != nil {
		return m.fail("querying the servers' health", err)
	}
	fmt.Fprintf(m.stdout, "Healthy: %v\nFailure Tolerance: %d\n\n", h.Healthy, h.FailureTolerance)
	var rows [][]string
	for _, s := range h.Servers {
		rows = append(rows, []string{s.Name, s.ID, s.Address, s.SerfStatus, fmt.Sprint(s.Leader), fmt.Sprint(s.Voter),
			fmt.Sprint(s.Healthy), s.LastContact, strconv.FormatUint(s.LastIndex, 10)})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "ID", "Address", "Serf", "Leader", "Voter", "Healthy", "Last Contact", "Last Index"}, rows))
	if !h.Healthy {
		return exitError
	}
	return exitOK
}
