package state

import (
	"fmt"
	"maps"

	"github.com/drover-io/drover/structs"
)

// refreshJob recomputes a job's Status and JobSummary from its allocations
// and evaluations, writing them only when they changed. Only those of the
// job as registered now count (see ownWork): a job purged and registered
// again under the same ID starts from zero.
func (w *WriteTxn) refreshJob(key structs.NamespacedID) error {
	raw, err := w.txn.First(TableJobs, "id", key.Namespace, key.ID)
	if err != nil {
		return fmt.Errorf("read job %q: %w", key.ID, err)
	}
	if raw == nil {
		return nil
	}
	job := raw.(*structs.Job)
	allocs, err := w.allocsByJob(key)
	if err != nil {
		return err
	}
	evals, err := w.evalsByJob(key)
	if err != nil {
		return err
	}
	allocs, evals = ownWork(job, allocs, evals)
	if status := jobStatus(job, allocs, evals); status != job.Status {
		c := job.Copy()
		c.Status = status
		c.ModifyIndex = w.index
		if err := w.txn.Insert(TableJobs, c); err != nil {
			return fmt.Errorf("update status of job %q: %w", key.ID, err)
		}
		w.markTable(TableJobs)
	}
	return w.refreshSummary(job, allocs, evals)
}

// ownWork keeps the allocations and evaluations of job's own registration,
// leaving out those of an earlier job with the same ID that was purged
// (they stay in the store until garbage collected): an allocation carries
// the job it was placed for, whose CreateIndex tells the registrations
// apart, and an evaluation of this job was created at or after it.
func ownWork(job *structs.Job, allocs []*structs.Allocation, evals []*structs.Evaluation) ([]*structs.Allocation, []*structs.Evaluation) {
	ownAllocs := allocs[:0:0]
	for _, a := range allocs {
		if a.Job == nil || a.Job.CreateIndex == job.CreateIndex {
			ownAllocs = append(ownAllocs, a)
		}
	}
	ownEvals := evals[:0:0]
	for _, e := range evals {
		if e.CreateIndex >= job.CreateIndex {
			ownEvals = append(ownEvals, e)
		}
	}
	return ownAllocs, ownEvals
}

// jobStatus derives a job's status: dead once stopped; running while it has
// allocations the server wants running; pending while evaluations are
// outstanding or nothing happened yet; dead when all its work is done.
func jobStatus(job *structs.Job, allocs []*structs.Allocation, evals []*structs.Evaluation) string {
	if job.Stop {
		return structs.JobStatusDead
	}
	if job.IsTemplate() {
		// A periodic or parameterized job runs while it can launch
		// children, as in Nomad.
		return structs.JobStatusRunning
	}
	for _, a := range allocs {
		if !a.TerminalStatus() {
			return structs.JobStatusRunning
		}
	}
	for _, e := range evals {
		if !e.TerminalStatus() {
			return structs.JobStatusPending
		}
	}
	if len(allocs) > 0 || len(evals) > 0 {
		return structs.JobStatusDead
	}
	return structs.JobStatusPending
}

func (w *WriteTxn) refreshSummary(job *structs.Job, allocs []*structs.Allocation, evals []*structs.Evaluation) error {
	summary := make(map[string]structs.TaskGroupSummary, len(job.TaskGroups))
	for _, tg := range job.TaskGroups {
		summary[tg.Name] = structs.TaskGroupSummary{}
	}
	for _, a := range allocs {
		s, ok := summary[a.TaskGroup]
		if !ok {
			continue
		}
		switch a.ClientStatus {
		case structs.AllocClientStatusPending:
			s.Starting++
		case structs.AllocClientStatusRunning:
			s.Running++
		case structs.AllocClientStatusComplete:
			s.Complete++
		case structs.AllocClientStatusFailed:
			s.Failed++
		case structs.AllocClientStatusLost:
			s.Lost++
		default:
			s.Unknown++
		}
		summary[a.TaskGroup] = s
	}
	// Queued is what the latest evaluation could not place yet.
	var latest *structs.Evaluation
	for _, e := range evals {
		if e.QueuedAllocations != nil && e.Status != structs.EvalStatusCancelled &&
			(latest == nil || e.ModifyIndex > latest.ModifyIndex) {
			latest = e
		}
	}
	if latest != nil {
		for tg, n := range latest.QueuedAllocations {
			if s, ok := summary[tg]; ok {
				s.Queued = n
				summary[tg] = s
			}
		}
	}

	raw, err := w.txn.First(TableJobSummary, "id", job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("read summary of job %q: %w", job.ID, err)
	}
	createIndex := w.index
	if raw != nil {
		existing := raw.(*structs.JobSummary)
		if maps.Equal(existing.Summary, summary) {
			return nil
		}
		createIndex = existing.CreateIndex
	}
	sum := &structs.JobSummary{
		JobID:       job.ID,
		Namespace:   job.Namespace,
		Summary:     summary,
		CreateIndex: createIndex,
		ModifyIndex: w.index,
	}
	if err := w.txn.Insert(TableJobSummary, sum); err != nil {
		return fmt.Errorf("update summary of job %q: %w", job.ID, err)
	}
	w.markTable(TableJobSummary)
	return nil
}
