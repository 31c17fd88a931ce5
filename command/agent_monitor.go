package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/logmonitor"
)

func runMonitor(m *Meta, args []string) int {
	fset := m.apiFlagSet("monitor", "[options]", `
Stream the log lines of the agent at -address, from now on, until
interrupted (Ctrl-C). The lines are those the agent logs at -log-level and
above, whatever the agent's own log_level: asking for debug lines shows
them without restarting the agent.

With -node-id the logs are those of that node's agent (the agent at
-address forwards the request).

A reader that falls behind loses lines rather than slowing the agent: a
warning line then says how many were dropped.`)
	level := fset.String("log-level", "info", "The lowest level shown: trace, debug, info, warn or error.")
	asJSON := fset.Bool("json", false, "Show the lines as JSON objects.")
	location := fset.Bool("log-include-location", false, "Add the source file and line of each line.")
	nodeID := fset.String("node-id", "", "Stream the logs of this node's agent (its ID or a unique prefix).")
	// Nomad's scripts may pass -server-id; a drover cluster has one
	// server, and the agent asked answers.
	_ = fset.String("server-id", "", "Accepted for Nomad compatibility: a drover cluster has one server.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	if _, err := logmonitor.ParseLevel(*level); err != nil {
		return m.usageError(fset, "-log-level: "+err.Error())
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	q := &api.QueryOptions{Params: monitorParams(*level, *asJSON, *location, *nodeID)}
	if err := copyMonitor(ctx, c.WithContext(ctx), m.stdout, q); err != nil && ctx.Err() == nil {
		return m.fail("streaming the agent's logs", err)
	}
	return exitOK
}

// monitorParams are the query parameters of a monitor request.
func monitorParams(level string, asJSON, location bool, nodeID string) map[string]string {
	p := map[string]string{"log_level": level, "log_json": strconv.FormatBool(asJSON)}
	if location {
		p["log_include_location"] = "true"
	}
	if nodeID != "" {
		p["node_id"] = nodeID
	}
	return p
}

// copyMonitor writes the agent's log lines to w until ctx ends or the agent
// ends the stream.
func copyMonitor(ctx context.Context, c *api.Client, w io.Writer, q *api.QueryOptions) error {
	frames, errs := c.Agent().Monitor(ctx.Done(), q)
	for f := range frames {
		if _, err := w.Write(f.Data); err != nil {
			return fmt.Errorf("write log lines: %w", err)
		}
	}
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func runAgentInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("agent-info", "[options]", `
Show the agent's statistics: its runtime, and those of its server and its
client, by section. With -json, the whole of GET /v1/agent/self (its
configuration, its membership and its statistics).`)
	asJSON := fset.Bool("json", false, "Show the agent's description as JSON.")
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
	self, err := c.Agent().Self()
	if err != nil {
		return m.fail("reading the agent's statistics", err)
	}
	if *asJSON {
		b, err := json.MarshalIndent(self, "", "    ")
		if err != nil {
			return m.fail("encoding the agent's description", err)
		}
		fmt.Fprintln(m.stdout, string(b))
		return exitOK
	}
	for _, section := range sortedKeys(self.Stats) {
		fmt.Fprintln(m.stdout, section)
		stats := self.Stats[section]
		for _, k := range sortedKeys(stats) {
			fmt.Fprintf(m.stdout, "  %s = %s\n", k, stats[k])
		}
	}
	return exitOK
}
