package state

import (
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TablePeriodicLaunch holds, per periodic job, its last launch (or its
// registration time before the first): the leader's periodic dispatcher
// reads it so that a tick launches at most once across leader changes.
const TablePeriodicLaunch = "periodic_launch"

func periodicLaunchSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TablePeriodicLaunch, Indexes: map[string]*memdb.IndexSchema{
		"id": nsIDIndex("ID"),
	}}
}

// PeriodicLaunchByID returns a periodic job's launch record, or nil.
func (r *reader) PeriodicLaunchByID(ws memdb.WatchSet, namespace, jobID string) (*structs.PeriodicLaunch, error) {
	return first[*structs.PeriodicLaunch](r, ws, TablePeriodicLaunch, "id", namespace, jobID)
}

// PeriodicLaunches returns every launch record.
func (r *reader) PeriodicLaunches(ws memdb.WatchSet) ([]*structs.PeriodicLaunch, error) {
	return get[*structs.PeriodicLaunch](r, ws, TablePeriodicLaunch, "id")
}

// UpsertPeriodicLaunch records a launch. A launch older than the stored
// one is ignored: the record only moves forward.
func (w *WriteTxn) UpsertPeriodicLaunch(l *structs.PeriodicLaunch) error {
	raw, err := w.txn.First(TablePeriodicLaunch, "id", l.Namespace, l.ID)
	if err != nil {
		return fmt.Errorf("read launch of job %q: %w", l.ID, err)
	}
	c := *l
	c.CreateIndex, c.ModifyIndex = w.index, w.index
	if raw != nil {
		prev := raw.(*structs.PeriodicLaunch)
		if !c.Launch.After(prev.Launch) {
			return nil
		}
		c.CreateIndex = prev.CreateIndex
	}
	if err := w.txn.Insert(TablePeriodicLaunch, &c); err != nil {
		return fmt.Errorf("record launch of job %q: %w", l.ID, err)
	}
	w.markTable(TablePeriodicLaunch)
	return nil
}

// EnsurePeriodicLaunch records, for a periodic job that has no launch
// record yet, its registration time (SubmitTime) as its last launch, so
// that a new leader does not count launches missed since the epoch.
func (w *WriteTxn) EnsurePeriodicLaunch(job *structs.Job) error {
	if !job.IsPeriodic() {
		return nil
	}
	raw, err := w.txn.First(TablePeriodicLaunch, "id", job.Namespace, job.ID)
	if err != nil || raw != nil {
		return err
	}
	return w.UpsertPeriodicLaunch(&structs.PeriodicLaunch{Namespace: job.Namespace, ID: job.ID, Launch: time.Unix(0, job.SubmitTime).UTC()})
}

// deletePeriodicLaunch removes a purged job's launch record.
func (w *WriteTxn) deletePeriodicLaunch(namespace, jobID string) error {
	raw, err := w.txn.First(TablePeriodicLaunch, "id", namespace, jobID)
	if err != nil || raw == nil {
		return err
	}
	if err := w.txn.Delete(TablePeriodicLaunch, raw); err != nil {
		return fmt.Errorf("delete launch of job %q: %w", jobID, err)
	}
	w.markTable(TablePeriodicLaunch)
	return nil
}

// PeriodicLaunch restores a launch record from a snapshot.
func (r *Restorer) PeriodicLaunch(l *structs.PeriodicLaunch) error {
	return r.insert(TablePeriodicLaunch, l)
}

// DispatchedChildByToken returns the child of parentID, not stopped, that
// was dispatched with idempotency token token, or nil. The FSM checks it
// when it applies a dispatch, so that two dispatches with one token
// register one child however they race.
func (w *WriteTxn) DispatchedChildByToken(namespace, parentID, token string) (*structs.Job, error) {
	it, err := w.txn.Get(TableJobs, "id_prefix", namespace, parentID+structs.DispatchLaunchSuffix)
	if err != nil {
		return nil, fmt.Errorf("read children of job %q: %w", parentID, err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		j := raw.(*structs.Job)
		if j.ParentID == parentID && j.DispatchIdempotencyToken == token && !j.Stop {
			return j, nil
		}
	}
	return nil, nil
}
