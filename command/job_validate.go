package command

import (
	"errors"
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
	"github.com/drover-io/drover/plugins/base"
)

// taskConfigValidator checks a task's driver config block against its
// driver's schema (base.TaskConfigSchemas of the built-in drivers); known
// is false for a driver it does not know.
type taskConfigValidator interface {
	ValidateTaskConfig(driver string, config map[string]any) (known bool, err error)
}

func runJobValidate(m *Meta, args []string) int {
	fset := m.apiFlagSet("job validate", "[options] <file>", `
Check a job file without running it: its syntax, its structure as the
agent checks it at registration, and the config block of every task
against its driver's options (for the built-in drivers docker, exec,
raw_exec and mock_driver: unknown or mistyped keys, values of the wrong
type, options of Nomad's drivers that drover does not take). Problems
in the file are reported with file:line:col.

When the agent cannot be reached, the file is checked here only, and the
output says so.

Exit codes: 0 when the job is valid, 1 otherwise.`)
	jv := addVarFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job file")
	}
	path := fset.Arg(0)
	job, ok := m.readJob(path, jv)
	if !ok {
		return exitError
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	resp, _, err := c.Jobs().Validate(job, nil)
	var ce *api.ConnectError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintf(m.stdout, "The agent at %s could not be reached: the job was checked here only, not as the agent checks it.\n", ce.Address)
	case err != nil:
		return m.fail("validating job", err)
	case resp.Error != "" || len(resp.ValidationErrors) > 0:
		problems := resp.ValidationErrors
		if len(problems) == 0 {
			problems = []string{resp.Error}
		}
		fmt.Fprintf(m.stderr, "Job validation errors:\n  * %s\n", strings.Join(problems, "\n  * "))
		return exitError
	}
	if resp != nil {
		if w := strings.TrimSpace(resp.Warnings); w != "" {
			fmt.Fprintf(m.stdout, "Job Warnings:\n%s\n\n", w)
		}
	}
	fmt.Fprintln(m.stdout, "Job validation successful")
	return exitOK
}

// readJob reads, parses and checks a job file for job run, plan and
// validate, printing what is wrong with it; ok is false when something is.
func (m *Meta) readJob(path string, jv *jobVars) (job *api.Job, ok bool) {
	src, err := m.readFile(path)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error reading job file: %v\n", err)
		return nil, false
	}
	opts, err := m.varOptions(jv)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error: %v\n", err)
		return nil, false
	}
	job, err = m.parseJob(path, src, opts)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error parsing job file %s:\n%v\n", path, err)
		return nil, false
	}
	if err := checkTaskConfigs(m.taskConfigs, path, src, job); err != nil {
		fmt.Fprintf(m.stderr, "Error in job file %s:\n%v\n", path, err)
		return nil, false
	}
	return job, true
}

// checkTaskConfigs checks the config block of every task of job (parsed
// from src) whose driver v knows, before anything is sent: each problem
// is a line "file:line:col: group "g", task "t": config field "f": what"
// (without the position for a JSON job file). A nil v checks nothing.
func checkTaskConfigs(v taskConfigValidator, path string, src []byte, job *api.Job) error {
	if v == nil {
		return nil
	}
	var positions map[jobspec.ConfigKey]jobspec.Position
	var problems []string
	for _, tg := range job.TaskGroups {
		group := derefString(tg.Name)
		for _, t := range tg.Tasks {
			known, err := v.ValidateTaskConfig(t.Driver, t.Config)
			if !known || err == nil {
				continue
			}
			if positions == nil {
				positions = jobspec.ConfigPositions(path, src)
			}
			for _, e := range joined(err) {
				field, msg := "", e.Error()
				var cfgErr *base.ConfigError
				if errors.As(e, &cfgErr) {
					field, msg = cfgErr.Field, cfgErr.Err.Error()
				}
				where := path
				if p, ok := jobspec.ConfigPosition(positions, jobspec.ConfigKey{Group: group, Task: t.Name, Field: field}); ok {
					where = p.String()
				}
				what := fmt.Sprintf("%s config", t.Driver)
				if field != "" {
					what = fmt.Sprintf("%s config field %q", t.Driver, field)
				}
				problems = append(problems, fmt.Sprintf("%s: group %q, task %q: %s: %s", where, group, t.Name, what, msg))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\n"))
}

// joined returns the errors joined in err (errors.Join), or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, joined(e)...)
		}
		return out
	}
	return []error{err}
}
