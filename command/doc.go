// Package command is drover's command line: `drover agent`, `drover job
// init|run|plan|status|stop|inspect|history|revert`, `drover alloc
// status|logs|fs|restart|signal|stop`, `drover node status`, `drover
// operator scheduler get-config|set-config`, `drover system gc`, `drover
// status` and `drover version` (the list is commands() in run.go).
//
// Where it sits in the data flow: it is the first and last step of a job's
// path. `job run` parses a job file locally (jobspec), submits it over the
// HTTP API (api) and follows the evaluation and allocations it produced;
// the status commands read the API and render what the server and clients
// recorded. `drover agent` hands over to the agent package.
//
// Files: run.go dispatches; meta.go holds what every command shares (output,
// flags, the API client, error messages); format.go the pure rendering
// helpers; one file per command; monitor.go follows an evaluation.
// Rendering functions take values and a fixed "now" so that golden tests
// under testdata/ pin the output.
package command
