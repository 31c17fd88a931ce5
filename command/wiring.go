package command

import (
	"io"

	"github.com/drover-io/drover/agent"
	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
)

// parseJobFunc parses a job file's contents with the values of its
// variables; filename is used in messages.
type parseJobFunc func(filename string, src []byte, opts jobspec.Options) (*api.Job, error)

// agentRunCommand runs `drover agent`: the agent package owns its flags,
// its help and its lifecycle.
func agentRunCommand(args []string, stdout, stderr io.Writer) int {
	return agent.RunCommand(args, stdout, stderr)
}

// builtinTaskConfigs returns the schemas of the built-in drivers' task
// config blocks, which job files are checked against before they are sent.
func builtinTaskConfigs() taskConfigValidator {
	return agent.TaskConfigSchemas()
}

// jobspecParse parses a job file with Nomad's HCL2 job specification.
func jobspecParse(filename string, src []byte, opts jobspec.Options) (*api.Job, error) {
	return jobspec.ParseWithOptions(filename, src, opts)
}
