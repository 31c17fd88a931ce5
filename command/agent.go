package command

// runAgent hands `drover agent ...` to the agent package, which owns its
// flags (every flag of `nomad agent`, agent/command_flags.go), its config
// files and its help.
func runAgent(m *Meta, args []string) int {
	return m.runAgent(args, m.stdout, m.stderr)
}
