package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/structs"
)

// TaskConfigValidator checks a task's driver config block when a job is
// submitted (JobRegister, JobPlan), so that a typo or an option the
// driver does not take is refused before anything is scheduled rather
// than found when the task starts. The server imports no driver: the agent
// wires one built from its catalog of built-in drivers
// (base.TaskConfigSchemas implements it).
type TaskConfigValidator interface {
	// ValidateTaskConfig checks config against driver's schema. known is
	// false for a driver the validator does not know (a plugin installed
	// on the clients), whose config the client checks when the task
	// starts. The error joins one problem per field, *base.ConfigError
	// naming the field where it can.
	ValidateTaskConfig(driver string, config map[string]any) (known bool, err error)
}

// checkTaskConfigs checks the config block of every task of job whose
// driver v knows (see TaskConfigProblems); the error, of kind invalid,
// lists every problem.
func checkTaskConfigs(v TaskConfigValidator, job *structs.Job) error {
	problems := TaskConfigProblems(v, job)
	if len(problems) == 0 {
		return nil
	}
	return structs.Invalid("invalid driver config:\n%s", strings.Join(problems, "\n"))
}

// TaskConfigProblems returns the problems of the config blocks of job's
// tasks whose driver v knows (nil v: none), one per field, each naming
// the field by its path in the job as the API writes it
// (Job.TaskGroups[0].Tasks[1].Config.port_map), with its group, task and
// driver. The HTTP API's /v1/validate/job reports them too.
func TaskConfigProblems(v TaskConfigValidator, job *structs.Job) []string {
	if v == nil {
		return nil
	}
	var problems []string
	for i, tg := range job.TaskGroups {
		for k, t := range tg.Tasks {
			known, err := v.ValidateTaskConfig(t.Driver, t.Config)
			if !known || err == nil {
				continue
			}
			where := fmt.Sprintf("group %q, task %q, driver %q", tg.Name, t.Name, t.Driver)
			path := fmt.Sprintf("Job.TaskGroups[%d].Tasks[%d].Config", i, k)
			for _, e := range flatten(err) {
				var ce *base.ConfigError
				switch {
				case errors.As(e, &ce) && ce.Field != "":
					problems = append(problems, fmt.Sprintf("%s.%s: %v (%s)", path, ce.Field, ce.Err, where))
				case errors.As(e, &ce):
					problems = append(problems, fmt.Sprintf("%s: %v (%s)", path, ce.Err, where))
				default:
					problems = append(problems, fmt.Sprintf("%s: %v (%s)", path, e, where))
				}
			}
		}
	}
	return problems
}

// flatten returns the errors joined in err (errors.Join), or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// JobValidate checks req.Job as JobRegister would (defaults, structure,
// the config blocks of the tasks whose drivers the server knows) and
// returns every problem found, one per line; nothing is stored. A job the
// request does not carry is an invalid request, not a problem.
func (s *Server) JobValidate(ctx context.Context, req *structs.JobValidateRequest) (*structs.JobValidateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.Job == nil {
		return nil, structs.Invalid("missing job")
	}
	job := req.Job.Copy()
	job.Canonicalize()
	resp := &structs.JobValidateResponse{Problems: []string{}}
	if err := job.Validate(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				resp.Problems = append(resp.Problems, line)
			}
		}
	}
	resp.Problems = append(resp.Problems, TaskConfigProblems(s.config.TaskConfigs, job)...)
	if err := s.checkJobNamespace(job); err != nil {
		resp.Problems = append(resp.Problems, err.Error())
	}
	return resp, nil
}
