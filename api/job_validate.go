package api

// JobValidateRequest is the body of PUT /v1/validate/job.
type JobValidateRequest struct {
	Job *Job
}

// JobValidateResponse says whether a job would be accepted: the problems
// found (ValidationErrors, also joined in Error) and the warnings a
// registration would give. DriverConfigValidated is true when the task
// config blocks were checked against their drivers' schemas.
type JobValidateResponse struct {
	DriverConfigValidated bool
	ValidationErrors      []string
	Error                 string
	Warnings              string
}

// Validate checks a job as a registration would, without registering it
// (PUT /v1/validate/job). A job with problems is a successful call whose
// response lists them.
func (j *Jobs) Validate(job *Job, w *WriteOptions) (*JobValidateResponse, *WriteMeta, error) {
	var resp JobValidateResponse
	wm, err := j.c.write("PUT", "/v1/validate/job", &JobValidateRequest{Job: job}, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
