package state

import (
	"fmt"

	"github.com/drover-io/drover/structs"
)

// SetJobVersionTag applies tag to a kept version of a job (and to the job
// when it is that version), or with a nil tag removes the tag of that
// version. A tag name already on another version of the job is
// KindConflict. Objects are replaced, never changed in place.
func (w *WriteTxn) SetJobVersionTag(namespace, jobID string, version uint64, tag *structs.JobVersionTag) error {
	it, err := w.txn.Get(TableJobVersion, "id_prefix", namespace, jobID)
	if err != nil {
		return fmt.Errorf("read versions of job %q: %w", jobID, err)
	}
	var target *structs.Job
	for raw := it.Next(); raw != nil; raw = it.Next() {
		j := raw.(*structs.Job)
		if j.ID != jobID {
			continue
		}
		if j.Version == version {
			target = j
			continue
		}
		if tag != nil && j.VersionTag != nil && j.VersionTag.Name == tag.Name {
			return structs.NewError(structs.KindConflict, "tag %q is already on version %d of job %q: unset it first", tag.Name, j.Version, jobID)
		}
	}
	if target == nil {
		return structs.NewError(structs.KindNotFound, "job %q has no version %d", jobID, version)
	}
	c := target.Copy()
	c.VersionTag = tag
	if err := w.txn.Insert(TableJobVersion, c); err != nil {
		return fmt.Errorf("tag version %d of job %q: %w", version, jobID, err)
	}
	w.markTable(TableJobVersion)
	raw, err := w.txn.First(TableJobs, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("read job %q: %w", jobID, err)
	}
	if raw == nil || raw.(*structs.Job).Version != version {
		return nil
	}
	cur := raw.(*structs.Job).Copy()
	cur.VersionTag = tag
	cur.ModifyIndex = w.index
	if err := w.txn.Insert(TableJobs, cur); err != nil {
		return fmt.Errorf("tag job %q: %w", jobID, err)
	}
	w.markTable(TableJobs)
	w.touchJob(namespace, jobID)
	return nil
}
