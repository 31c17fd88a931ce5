package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TableJobSubmissions holds the sources of kept job versions
// (structs.JobSubmission), removed with their version.
const TableJobSubmissions = "job_submission"

func jobSubmissionsSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableJobSubmissions, Indexes: map[string]*memdb.IndexSchema{
		"id": {
			Name:   "id",
			Unique: true,
			Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "JobID"},
				&memdb.UintFieldIndex{Field: "Version"},
			}},
		},
	}}
}

// JobSubmission returns the source of one version of a job, or nil.
func (r *reader) JobSubmission(ws memdb.WatchSet, namespace, jobID string, version uint64) (*structs.JobSubmission, error) {
	return first[*structs.JobSubmission](r, ws, TableJobSubmissions, "id", namespace, jobID, version)
}

// JobSubmissions returns every kept job source (for snapshots).
func (r *reader) JobSubmissions(ws memdb.WatchSet) ([]*structs.JobSubmission, error) {
	return get[*structs.JobSubmission](r, ws, TableJobSubmissions, "id")
}

// UpsertJobSubmission keeps the source of a job version; the version must
// be kept (UpsertJob first).
func (w *WriteTxn) UpsertJobSubmission(sub *structs.JobSubmission) error {
	if err := w.txn.Insert(TableJobSubmissions, sub); err != nil {
		return fmt.Errorf("keep the source of version %d of job %q: %w", sub.Version, sub.JobID, err)
	}
	w.markTable(TableJobSubmissions)
	return nil
}

// deleteJobSubmission drops the source of one version of a job, if kept.
func (w *WriteTxn) deleteJobSubmission(namespace, jobID string, version uint64) error {
	raw, err := w.txn.First(TableJobSubmissions, "id", namespace, jobID, version)
	if err != nil || raw == nil {
		return err
	}
	if err := w.txn.Delete(TableJobSubmissions, raw); err != nil {
		return fmt.Errorf("drop the source of version %d of job %q: %w", version, jobID, err)
	}
	w.markTable(TableJobSubmissions)
	return nil
}

// JobSubmission restores a kept job source.
func (r *Restorer) JobSubmission(s *structs.JobSubmission) error {
	return r.insert(TableJobSubmissions, s)
}
