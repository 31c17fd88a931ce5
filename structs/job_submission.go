package structs

// MaxJobSourceBytes bounds a job submission's source plus variables (as
// Nomad's job_max_source_size default): a larger one is not kept, and
// the registration says so in a warning.
const MaxJobSourceBytes = 1 << 20

// JobSubmission is the source a job version was registered from (as
// Nomad's): the job file's text, its format (hcl2, json), the -var flags
// and the variable file content. It is kept per version, as long as the
// version is, and read with GET /v1/job/:id/submission?version=N.
type JobSubmission struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string

	// Set by the server: the job version the source is of.
	Namespace string
	JobID     string
	Version   uint64
}

// Size is the bytes a submission holds.
func (s *JobSubmission) Size() int {
	n := len(s.Source) + len(s.Format) + len(s.Variables)
	for k, v := range s.VariableFlags {
		n += len(k) + len(v)
	}
	return n
}

// JobSubmissionRequest reads the source of one version of a job.
type JobSubmissionRequest struct {
	JobID   string
	Version uint64
	QueryOptions
}

// JobSubmissionResponse holds a job version's source.
type JobSubmissionResponse struct {
	Submission *JobSubmission
	QueryMeta
}
