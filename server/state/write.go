package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// WriteTxn is one atomic write at one raft index. Its methods are the state
// changes the FSM makes; Batch commits them together, after updating the
// status and summary of every job they touched.
type WriteTxn struct {
	txn     *memdb.Txn
	index   uint64
	tables  map[string]bool
	touched map[structs.NamespacedID]bool
}

// Batch runs fn in one write transaction at raft index index and commits it
// if fn returns nil. Watch sets on anything it changed fire on commit.
func (s *StateStore) Batch(index uint64, fn func(w *WriteTxn) error) error {
	_, err := s.batch(index, false, fn)
	return err
}

// Change is one object a batch wrote: Before is nil when the batch
// created it, After nil when it deleted it. Both are read-only.
type Change struct {
	Table         string
	Before, After any
}

// BatchChanges is Batch that also returns what the batch changed, in the
// order it changed it (the raft apply's events, server/events).
func (s *StateStore) BatchChanges(index uint64, fn func(w *WriteTxn) error) ([]Change, error) {
	return s.batch(index, true, fn)
}

func (s *StateStore) batch(index uint64, track bool, fn func(w *WriteTxn) error) ([]Change, error) {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if track {
		txn.TrackChanges()
	}
	w := &WriteTxn{txn: txn, index: index, tables: map[string]bool{}, touched: map[structs.NamespacedID]bool{}}
	if err := fn(w); err != nil {
		return nil, err
	}
	if err := w.finish(); err != nil {
		return nil, err
	}
	var out []Change
	if track {
		for _, c := range txn.Changes() {
			if c.Table != TableIndex {
				out = append(out, Change{Table: c.Table, Before: c.Before, After: c.After})
			}
		}
	}
	txn.Commit()
	return out, nil
}

func (w *WriteTxn) markTable(table string) { w.tables[table] = true }

func (w *WriteTxn) touchJob(ns, id string) {
	w.touched[structs.NamespacedID{Namespace: ns, ID: id}] = true
}

// finish refreshes the touched jobs' status and summary and bumps the index
// of every changed table.
func (w *WriteTxn) finish() error {
	for key := range w.touched {
		if err := w.refreshJob(key); err != nil {
			return err
		}
	}
	for table := range w.tables {
		if err := w.txn.Insert(TableIndex, &indexEntry{Key: table, Value: w.index}); err != nil {
			return fmt.Errorf("update index of %s: %w", table, err)
		}
	}
	return nil
}

// UpsertJob stores job (owned by the store from now on). The caller sets
// Version and SubmitTime; the store sets the indexes and Status.
func (s *StateStore) UpsertJob(index uint64, job *structs.Job) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpsertJob(job) })
}

// DeleteJob removes a job and its summary. Its allocations and evaluations
// stay until garbage collected.
func (s *StateStore) DeleteJob(index uint64, namespace, jobID string) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.DeleteJob(namespace, jobID) })
}

// UpsertEvals stores evaluations.
func (s *StateStore) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpsertEvals(evals) })
}

// UpsertAllocs stores allocations as the server sees them (placement,
// desired status); an existing allocation keeps its client-side fields,
// except its deployment health when the allocation moves to another
// deployment (an in-place update joining the new version's).
func (s *StateStore) UpsertAllocs(index uint64, allocs []*structs.Allocation) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpsertAllocs(allocs) })
}

// UpdateAllocsFromClient applies client updates: only ClientStatus,
// ClientDescription, TaskStates, NetworkStatus, DeploymentStatus (and
// ModifyTime) change. An update's DeploymentID names the deployment its
// DeploymentStatus was decided for ("" for a verdict outside any
// deployment, the migrate block's); a verdict for another deployment than
// the allocation's, "" included, is stale and dropped.
func (s *StateStore) UpdateAllocsFromClient(index uint64, updates []*structs.Allocation) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpdateAllocsFromClient(updates) })
}

// UpsertNode registers or updates a node.
func (s *StateStore) UpsertNode(index uint64, node *structs.Node) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpsertNode(node) })
}

// UpdateNodeStatus sets a node's status; updatedAt is Unix seconds.
func (s *StateStore) UpdateNodeStatus(index uint64, nodeID, status string, updatedAt int64) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.UpdateNodeStatus(nodeID, status, updatedAt) })
}

// DeleteNode removes a node.
func (s *StateStore) DeleteNode(index uint64, nodeID string) error {
	return s.Batch(index, func(w *WriteTxn) error { return w.DeleteNode(nodeID) })
}
