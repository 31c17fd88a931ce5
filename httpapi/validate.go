package httpapi

import (
	"net/http"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// jobValidate is PUT|POST /v1/validate/job: {"Job": {...}} ->
// JobValidateResponse. The job is converted here and checked by the server
// as a registration checks it (defaults, structure, the config blocks of
// the tasks whose drivers the server knows). Nothing is stored. As Nomad's,
// a job with problems is a 200 whose body lists them; a body that is not a
// job at all is a 400.
func (s *Server) jobValidate(w http.ResponseWriter, req *http.Request) (any, error) {
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
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				resp.ValidationErrors = append(resp.ValidationErrors, line)
			}
		}
		resp.Error = strings.Join(resp.ValidationErrors, "\n")
		return resp, nil
	}
	if job.Namespace == "" {
		job.Namespace = firstNonEmpty(req.URL.Query().Get("namespace"), body.Namespace, structs.DefaultNamespace)
	}
	checked, err := rpcapi.JobValidate.Call(req.Context(), s.rpc, &structs.JobValidateRequest{Job: job})
	if err != nil {
		return nil, err
	}
	resp.ValidationErrors = append(resp.ValidationErrors, checked.Problems...)
	resp.Error = strings.Join(resp.ValidationErrors, "\n")
	resp.Warnings = formatWarnings(warnings)
	return resp, nil
}
