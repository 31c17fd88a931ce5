package command

import "fmt"

func runVersion(m *Meta, args []string) int {
	fs := m.flagSet("version", "", "Print drover's version.")
	if code, done := m.parse(fs, args); done {
		return code
	}
	fmt.Fprintf(m.stdout, "Drover v%s\n", Version)
	return 0
}
