package command

import (
	"fmt"
	"io"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
)

// parseJobFunc parses a job file's contents; filename is used in messages.
type parseJobFunc func(filename string, src []byte) (*api.Job, error)

// agentRunCommand runs `drover agent`.
func agentRunCommand(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "Error: the agent is not built into this binary yet")
	return 1
}

// jobspecParse parses a job file with Nomad's HCL2 job specification.
func jobspecParse(filename string, src []byte) (*api.Job, error) {
	return jobspec.Parse(filename, src)
}
