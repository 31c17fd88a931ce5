package agent

import (
	"net/http"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// jobValidate is PUT|POST /v1/validate/job: {"Job": {...}} ->
// JobValidateResponse. The job is checked as a registration checks it:
// converted, completed with defaults and validated, and its tasks' config
// blocks checked against the schemas of the drivers the agent knows
// (s.taskConfigs, the built-in ones). Nothing is stored. As Nomad's, a job
// with problems is a 200 whose body lists them; a body that is not a job
// at all is a 400.
func (s *httpServer) jobValidate(w http.ResponseWriter, req *http.Request) (any, error) {
	var body struct {
		Job *api.Job
		// What Nomad's clients send with every write.
		Region, Namespace, SecretID, IdempotencyToken string
	}
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, structs.Invalid("request body has no Job: send {\"Job\": {...}}")
	}
	resp := &api.JobValidateResponse{DriverConfigValidated: true, ValidationErrors: []string{}}
	job, warnings, err := ConvertJob(body.Job)
	if err != nil {
		return invalidJob(resp, err), nil
	}
	if job.Namespace == "" {
		job.Namespace = firstNonEmpty(req.URL.Query().Get("namespace"), body.Namespace, structs.DefaultNamespace)
	}
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		invalidJob(resp, err)
	}
	resp.ValidationErrors = append(resp.ValidationErrors, server.TaskConfigProblems(s.taskConfigs, job)...)
	resp.Error = strings.Join(resp.ValidationErrors, "\n")
	resp.Warnings = formatWarnings(warnings)
	return resp, nil
}

// invalidJob adds the lines of err to resp's problems and returns resp.
func invalidJob(resp *api.JobValidateResponse, err error) *api.JobValidateResponse {
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			resp.ValidationErrors = append(resp.ValidationErrors, line)
		}
	}
	resp.Error = strings.Join(resp.ValidationErrors, "\n")
	return resp
}
