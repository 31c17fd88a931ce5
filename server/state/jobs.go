package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// JobByID returns a job, or nil.
func (r *reader) JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	return first[*structs.Job](r, ws, TableJobs, "id", namespace, id)
}

// Jobs returns every job of every namespace.
func (r *reader) Jobs(ws memdb.WatchSet) ([]*structs.Job, error) {
	return get[*structs.Job](r, ws, TableJobs, "id")
}

// JobsByNamespace returns the jobs of one namespace.
func (r *reader) JobsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.Job, error) {
	return get[*structs.Job](r, ws, TableJobs, "id_prefix", namespace, "")
}

// JobsByIDPrefix returns the jobs of a namespace whose ID starts with prefix.
func (r *reader) JobsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Job, error) {
	return get[*structs.Job](r, ws, TableJobs, "id_prefix", namespace, prefix)
}

// JobSummaryByID returns a job's summary, or nil.
func (r *reader) JobSummaryByID(ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	return first[*structs.JobSummary](r, ws, TableJobSummary, "id", namespace, jobID)
}

// JobSummaries returns every job summary.
func (r *reader) JobSummaries(ws memdb.WatchSet) ([]*structs.JobSummary, error) {
	return get[*structs.JobSummary](r, ws, TableJobSummary, "id")
}

// UpsertJob stores job; see StateStore.UpsertJob.
func (w *WriteTxn) UpsertJob(job *structs.Job) error {
	if job == nil || job.ID == "" {
		return fmt.Errorf("upsert job: missing job ID")
	}
	raw, err := w.txn.First(TableJobs, "id", job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	job.CreateIndex = w.index
	if raw != nil {
		existing := raw.(*structs.Job)
		job.CreateIndex = existing.CreateIndex
		job.Status = existing.Status
	}
	job.ModifyIndex = w.index
	job.JobModifyIndex = w.index
	if job.Status == "" {
		job.Status = structs.JobStatusPending
	}
	if err := w.txn.Insert(TableJobs, job); err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	w.markTable(TableJobs)
	w.touchJob(job.Namespace, job.ID)
	return w.upsertJobVersion(job)
}

// DeleteJob removes a job and its summary; see StateStore.DeleteJob.
func (w *WriteTxn) DeleteJob(namespace, jobID string) error {
	raw, err := w.txn.First(TableJobs, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("delete job %q: %w", jobID, err)
	}
	if raw == nil {
		return structs.NotFound("job", jobID)
	}
	if err := w.txn.Delete(TableJobs, raw); err != nil {
		return fmt.Errorf("delete job %q: %w", jobID, err)
	}
	w.markTable(TableJobs)
	if err := w.deleteJobVersions(namespace, jobID); err != nil {
		return err
	}
	if err := w.deletePeriodicLaunch(namespace, jobID); err != nil { // periodic.go
		return err
	}
	sum, err := w.txn.First(TableJobSummary, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("delete summary of job %q: %w", jobID, err)
	}
	if sum != nil {
		if err := w.txn.Delete(TableJobSummary, sum); err != nil {
			return fmt.Errorf("delete summary of job %q: %w", jobID, err)
		}
		w.markTable(TableJobSummary)
	}
	return nil
}
