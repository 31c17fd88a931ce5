package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// JobVersions returns the kept versions of a job, newest first.
func (r *reader) JobVersions(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Job, error) {
	all, err := get[*structs.Job](r, ws, TableJobVersion, "id_prefix", namespace, jobID)
	if err != nil {
		return nil, err
	}
	var out []*structs.Job
	for _, j := range all {
		if j.ID == jobID { // the prefix index also matches longer IDs
			out = append(out, j)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Version > out[k].Version })
	return out, nil
}

// JobByIDAndVersion returns one kept version of a job, or nil.
func (r *reader) JobByIDAndVersion(ws memdb.WatchSet, namespace, jobID string, version uint64) (*structs.Job, error) {
	return first[*structs.Job](r, ws, TableJobVersion, "id", namespace, jobID, version)
}

// AllJobVersions returns every kept version of every job, for snapshots.
func (r *reader) AllJobVersions(ws memdb.WatchSet) ([]*structs.Job, error) {
	return get[*structs.Job](r, ws, TableJobVersion, "id")
}

// upsertJobVersion records job as a kept version and drops the oldest
// beyond structs.JobTrackedVersions.
func (w *WriteTxn) upsertJobVersion(job *structs.Job) error {
	if err := w.txn.Insert(TableJobVersion, job); err != nil {
		return fmt.Errorf("record version %d of job %q: %w", job.Version, job.ID, err)
	}
	w.markTable(TableJobVersion)
	it, err := w.txn.Get(TableJobVersion, "id_prefix", job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("read versions of job %q: %w", job.ID, err)
	}
	var versions []*structs.Job
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if j := raw.(*structs.Job); j.ID == job.ID {
			versions = append(versions, j)
		}
	}
	if len(versions) <= structs.JobTrackedVersions {
		return nil
	}
	sort.Slice(versions, func(i, k int) bool { return versions[i].Version > versions[k].Version })
	for _, old := range versions[structs.JobTrackedVersions:] {
		if old.VersionTag != nil {
			continue // a tagged version is kept (version_tags.go)
		}
		if err := w.txn.Delete(TableJobVersion, old); err != nil {
			return fmt.Errorf("drop version %d of job %q: %w", old.Version, job.ID, err)
		}
		if err := w.deleteJobSubmission(old.Namespace, old.ID, old.Version); err != nil {
			return err
		}
	}
	return nil
}

// deleteJobVersions removes every kept version of a job (purge).
func (w *WriteTxn) deleteJobVersions(namespace, jobID string) error {
	it, err := w.txn.Get(TableJobVersion, "id_prefix", namespace, jobID)
	if err != nil {
		return fmt.Errorf("read versions of job %q: %w", jobID, err)
	}
	var del []*structs.Job
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if j := raw.(*structs.Job); j.ID == jobID {
			del = append(del, j)
		}
	}
	for _, j := range del {
		if err := w.txn.Delete(TableJobVersion, j); err != nil {
			return fmt.Errorf("drop version %d of job %q: %w", j.Version, jobID, err)
		}
		if err := w.deleteJobSubmission(namespace, jobID, j.Version); err != nil {
			return err
		}
		w.markTable(TableJobVersion)
	}
	return nil
}

// SetJobStable marks one version of a job stable (its deployment
// succeeded): the kept version, and the current job when it is that
// version. Objects are replaced, never changed in place.
func (w *WriteTxn) SetJobStable(namespace, jobID string, version uint64) error {
	raw, err := w.txn.First(TableJobVersion, "id", namespace, jobID, version)
	if err != nil {
		return fmt.Errorf("read version %d of job %q: %w", version, jobID, err)
	}
	if raw != nil {
		c := raw.(*structs.Job).Copy()
		c.Stable = true
		if err := w.txn.Insert(TableJobVersion, c); err != nil {
			return fmt.Errorf("mark version %d of job %q stable: %w", version, jobID, err)
		}
		w.markTable(TableJobVersion)
	}
	raw, err = w.txn.First(TableJobs, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("read job %q: %w", jobID, err)
	}
	if raw == nil || raw.(*structs.Job).Version != version {
		return nil
	}
	c := raw.(*structs.Job).Copy()
	c.Stable = true
	c.ModifyIndex = w.index
	if err := w.txn.Insert(TableJobs, c); err != nil {
		return fmt.Errorf("mark job %q stable: %w", jobID, err)
	}
	w.markTable(TableJobs)
	return nil
}

// JobVersion restores a kept job version.
func (r *Restorer) JobVersion(j *structs.Job) error { return r.insert(TableJobVersion, j) }
