package state

import (
	"fmt"

	"github.com/drover-io/drover/structs"
)

// AddScalingEvent records a scaling event of a job's group that changed
// no count (an autoscaler's message or error): the job is stored again
// with the event, at the same version and JobModifyIndex.
func (w *WriteTxn) AddScalingEvent(namespace, jobID, group string, e *structs.ScalingEvent) error {
	raw, err := w.txn.First(TableJobs, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("read job %q: %w", jobID, err)
	}
	if raw == nil {
		return structs.NotFound("job", jobID)
	}
	job := raw.(*structs.Job).Copy()
	ev := *e
	ev.CreateIndex = w.index
	job.ScalingEvents = job.WithScalingEvent(group, &ev)
	job.ModifyIndex = w.index
	if err := w.txn.Insert(TableJobs, job); err != nil {
		return fmt.Errorf("store job %q: %w", jobID, err)
	}
	if err := w.txn.Insert(TableJobVersion, job); err != nil {
		return fmt.Errorf("store version %d of job %q: %w", job.Version, jobID, err)
	}
	w.markTable(TableJobs)
	w.markTable(TableJobVersion)
	w.touchJob(namespace, jobID)
	return nil
}
