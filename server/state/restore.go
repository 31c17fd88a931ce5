package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// Restorer inserts objects as they are, indexes included, into a fresh store
// (restoring a raft snapshot). Nothing is recomputed.
type Restorer struct {
	txn *memdb.Txn
}

// Restore runs fn in one write transaction on s, which should be empty, and
// commits it if fn returns nil.
func (s *StateStore) Restore(fn func(r *Restorer) error) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if err := fn(&Restorer{txn: txn}); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (r *Restorer) insert(table string, obj any) error {
	if err := r.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("restore %s: %w", table, err)
	}
	return nil
}

// Job restores a job.
func (r *Restorer) Job(j *structs.Job) error { return r.insert(TableJobs, j) }

// JobSummary restores a job summary.
func (r *Restorer) JobSummary(s *structs.JobSummary) error { return r.insert(TableJobSummary, s) }

// Alloc restores an allocation.
func (r *Restorer) Alloc(a *structs.Allocation) error { return r.insert(TableAllocs, a) }

// Eval restores an evaluation.
func (r *Restorer) Eval(e *structs.Evaluation) error { return r.insert(TableEvals, e) }

// Node restores a node.
func (r *Restorer) Node(n *structs.Node) error { return r.insert(TableNodes, n) }

// Index restores a table's index.
func (r *Restorer) Index(table string, index uint64) error {
	return r.insert(TableIndex, &indexEntry{Key: table, Value: index})
}

// Indexes returns every table's index, for writing a snapshot.
func (r *reader) Indexes() (map[string]uint64, error) {
	entries, err := get[*indexEntry](r, nil, TableIndex, "id")
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(entries))
	for _, e := range entries {
		out[e.Key] = e.Value
	}
	return out, nil
}
