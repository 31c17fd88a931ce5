package state

import (
	"fmt"
	"sync"

	memdb "github.com/hashicorp/go-memdb"
)

// StateStore is the live cluster state. Reads are safe for concurrent use
// with writes; writes come only from the raft FSM.
type StateStore struct {
	reader

	abandonOnce sync.Once
	abandonCh   chan struct{}
}

// StateSnapshot is a consistent, read-only view of the state at one moment.
type StateSnapshot struct {
	reader
}

// reader holds the read methods shared by StateStore and StateSnapshot.
type reader struct {
	db *memdb.MemDB
}

// NewStateStore returns an empty state store.
func NewStateStore() (*StateStore, error) {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		return nil, fmt.Errorf("create state schema: %w", err)
	}
	return &StateStore{reader: reader{db: db}, abandonCh: make(chan struct{})}, nil
}

// Snapshot returns a read-only view of the current state; later writes to the
// store do not show in it.
func (s *StateStore) Snapshot() *StateSnapshot {
	return &StateSnapshot{reader: reader{db: s.db.Snapshot()}}
}

// View returns the store as it is now, for a query that reads several
// tables or a table and its index: later writes do not show in it, so
// what the query returns matches the index it reports. Its watches fire
// on later writes to the live store, and its AbandonCh is the store's.
func (s *StateStore) View() *StateStore {
	return &StateStore{reader: reader{db: s.db.Snapshot()}, abandonCh: s.abandonCh}
}

// AbandonCh is closed when the store is replaced (a raft snapshot was
// restored): blocking queries watching it must re-read from the new store.
func (s *StateStore) AbandonCh() <-chan struct{} { return s.abandonCh }

// Abandon closes AbandonCh. It is idempotent.
func (s *StateStore) Abandon() { s.abandonOnce.Do(func() { close(s.abandonCh) }) }

// Index returns the raft index at which table last changed, 0 if never.
func (r *reader) Index(table string) uint64 {
	txn := r.db.Txn(false)
	raw, err := txn.First(TableIndex, "id", table)
	if err != nil || raw == nil {
		return 0
	}
	return raw.(*indexEntry).Value
}

// MaxIndex returns the highest of the tables' indexes.
func (r *reader) MaxIndex(tables ...string) uint64 {
	var max uint64
	for _, t := range tables {
		if i := r.Index(t); i > max {
			max = i
		}
	}
	return max
}

// LatestIndex returns the highest index of any table: the last raft index
// applied to the store.
func (r *reader) LatestIndex() uint64 {
	txn := r.db.Txn(false)
	it, err := txn.Get(TableIndex, "id")
	if err != nil {
		return 0
	}
	var max uint64
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if v := raw.(*indexEntry).Value; v > max {
			max = v
		}
	}
	return max
}

// get runs a Get on table and collects the results, watching the iterator.
func get[T any](r *reader, ws memdb.WatchSet, table, index string, args ...any) ([]T, error) {
	txn := r.db.Txn(false)
	it, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s by %s: %w", table, index, err)
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []T
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(T))
	}
	return out, nil
}

// first runs a FirstWatch on table, returning the zero T when there is none.
func first[T any](r *reader, ws memdb.WatchSet, table, index string, args ...any) (T, error) {
	var zero T
	txn := r.db.Txn(false)
	ch, raw, err := txn.FirstWatch(table, index, args...)
	if err != nil {
		return zero, fmt.Errorf("read %s by %s: %w", table, index, err)
	}
	if ws != nil {
		ws.Add(ch)
	}
	if raw == nil {
		return zero, nil
	}
	return raw.(T), nil
}
