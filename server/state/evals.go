package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// EvalByID returns an evaluation, or nil.
func (r *reader) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return first[*structs.Evaluation](r, ws, TableEvals, "id", id)
}

// Evals returns every evaluation.
func (r *reader) Evals(ws memdb.WatchSet) ([]*structs.Evaluation, error) {
	return get[*structs.Evaluation](r, ws, TableEvals, "id")
}

// EvalsByIDPrefix returns the evaluations whose ID starts with prefix.
func (r *reader) EvalsByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Evaluation, error) {
	return get[*structs.Evaluation](r, ws, TableEvals, "id_prefix", prefix)
}

// EvalsByJob returns a job's evaluations.
func (r *reader) EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	return get[*structs.Evaluation](r, ws, TableEvals, "job", namespace, jobID)
}

func (w *WriteTxn) evalsByJob(key structs.NamespacedID) ([]*structs.Evaluation, error) {
	it, err := w.txn.Get(TableEvals, "job", key.Namespace, key.ID)
	if err != nil {
		return nil, fmt.Errorf("read evals of job %q: %w", key.ID, err)
	}
	var out []*structs.Evaluation
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*structs.Evaluation))
	}
	return out, nil
}

// UpsertEvals stores evaluations, which become the store's.
func (w *WriteTxn) UpsertEvals(evals []*structs.Evaluation) error {
	for _, e := range evals {
		if e.ID == "" {
			return fmt.Errorf("upsert eval: missing ID")
		}
		raw, err := w.txn.First(TableEvals, "id", e.ID)
		if err != nil {
			return fmt.Errorf("upsert eval %q: %w", e.ID, err)
		}
		e.CreateIndex = w.index
		if raw != nil {
			e.CreateIndex = raw.(*structs.Evaluation).CreateIndex
		}
		e.ModifyIndex = w.index
		if err := w.txn.Insert(TableEvals, e); err != nil {
			return fmt.Errorf("upsert eval %q: %w", e.ID, err)
		}
		w.markTable(TableEvals)
		w.touchJob(e.Namespace, e.JobID)
	}
	return nil
}
