package command

// runAgent hands `drover agent ...` to the agent package, which owns its
// flags (-dev, -bind, -http-port, -data-dir, -log-level) and its help.
func runAgent(m *Meta, args []string) int {
	return m.runAgent(args, m.stdout, m.stderr)
}
