package state

import (
	"fmt"

	"github.com/drover-io/drover/structs"
)

// Garbage is what the servers' garbage collector deletes in one apply.
// Objects already gone are skipped: a GC entry replayed, or racing
// another, deletes nothing twice.
type Garbage struct {
	Evals       []string
	Allocs      []string
	Jobs        []structs.NamespacedID
	Deployments []string
	Nodes       []string
}

// DeleteGarbage deletes g. Jobs go with their versions and summaries.
func (w *WriteTxn) DeleteGarbage(g *Garbage) error {
	for _, id := range g.Evals {
		if err := w.deleteByID(TableEvals, id); err != nil {
			return fmt.Errorf("delete evaluation %q: %w", id, err)
		}
	}
	for _, id := range g.Allocs {
		raw, err := w.txn.First(TableAllocs, "id", id)
		if err != nil {
			return fmt.Errorf("delete allocation %q: %w", id, err)
		}
		if raw == nil {
			continue
		}
		a := raw.(*structs.Allocation)
		if err := w.txn.Delete(TableAllocs, raw); err != nil {
			return fmt.Errorf("delete allocation %q: %w", id, err)
		}
		if _, err := w.DeleteServiceRegistrationsByAlloc([]string{id}); err != nil {
			return err
		}
		w.markTable(TableAllocs)
		w.touchJob(a.Namespace, a.JobID)
	}
	for _, d := range g.Deployments {
		if err := w.deleteByID(TableDeployment, d); err != nil {
			return fmt.Errorf("delete deployment %q: %w", d, err)
		}
	}
	for _, j := range g.Jobs {
		raw, err := w.txn.First(TableJobs, "id", j.Namespace, j.ID)
		if err != nil {
			return fmt.Errorf("delete job %q: %w", j.ID, err)
		}
		if raw == nil {
			continue
		}
		if err := w.DeleteJob(j.Namespace, j.ID); err != nil {
			return err
		}
	}
	for _, id := range g.Nodes {
		raw, err := w.txn.First(TableNodes, "id", id)
		if err != nil {
			return fmt.Errorf("delete node %q: %w", id, err)
		}
		if raw == nil {
			continue
		}
		if err := w.DeleteNode(id); err != nil {
			return err
		}
	}
	return nil
}

// deleteByID deletes the object with ID id from table, if it is there.
func (w *WriteTxn) deleteByID(table, id string) error {
	raw, err := w.txn.First(table, "id", id)
	if err != nil || raw == nil {
		return err
	}
	if err := w.txn.Delete(table, raw); err != nil {
		return err
	}
	w.markTable(table)
	return nil
}

// ReconcileSummaries recomputes every job's status and summary from its
// allocations and evaluations (system reconcile summaries).
func (w *WriteTxn) ReconcileSummaries() error {
	it, err := w.txn.Get(TableJobs, "id")
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		j := raw.(*structs.Job)
		w.touchJob(j.Namespace, j.ID)
	}
	return nil
}
