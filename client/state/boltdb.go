package state

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/drover-io/drover/structs"
)

var _ StateDB = (*BoltStateDB)(nil)

// BoltStateDB is the StateDB of a real agent: a bbolt file under its
// data_dir (layout in schema.go). Every Put is durable when it returns.
// Puts from concurrent callers (the client, its AllocRunners and
// TaskRunners) are group-committed: a Put that finds no commit in progress
// commits at once, and those that arrive during a commit share the next
// transaction (one fsync for many writers; groupcommit.go). A Put of a
// value byte-identical to the stored one does no I/O. Open one with
// NewBoltStateDB.
type BoltStateDB struct {
	path   string
	db     *bolt.DB
	group  *groupCommitter
	logger *slog.Logger
	cache  *writeCache
	closed atomic.Bool
}

// writeMode is how a Put's transaction is committed: grouped (every Put),
// or, for the benchmarks that compare them, through bbolt's timer-based
// Batch or in a transaction of its own.
type writeMode int

const (
	grouped writeMode = iota
	boltBatch
	solo
)

// Path returns the state file's path.
func (s *BoltStateDB) Path() string { return s.path }

// GetAllAllocations returns every stored allocation, in ID order. An
// allocation whose value does not decode is reported in errs by ID.
func (s *BoltStateDB) GetAllAllocations() ([]*structs.Allocation, map[string]error, error) {
	if s.closed.Load() {
		return nil, nil, ErrClosed
	}
	var allocs []*structs.Allocation
	errs := make(map[string]error)
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(allocationsBucket)
		if root == nil {
			return corruptError(s.path, fmt.Errorf("bucket %q is missing", allocationsBucket))
		}
		return root.ForEachBucket(func(id []byte) error {
			raw := root.Bucket(id).Get(allocKey)
			if raw == nil {
				return nil // task state written before its alloc
			}
			var a *structs.Allocation
			if err := decodeValue(raw, &a); err != nil {
				errs[string(id)] = fmt.Errorf("state file %s: allocation %q: %w", s.path, id, err)
				return nil
			}
			if a == nil {
				errs[string(id)] = fmt.Errorf("state file %s: allocation %q: stored value is null", s.path, id)
				return nil
			}
			allocs = append(allocs, a)
			return nil
		})
	})
	if err != nil {
		return nil, nil, s.txError("read allocations", err)
	}
	if len(errs) == 0 {
		errs = nil
	}
	return allocs, errs, nil
}

// PutAllocation stores (creates or replaces) an allocation.
func (s *BoltStateDB) PutAllocation(alloc *structs.Allocation) error {
	if alloc == nil || alloc.ID == "" {
		return structs.Invalid("put allocation: missing allocation ID")
	}
	data, err := encodeValue(alloc)
	if err != nil {
		return fmt.Errorf("put allocation %q: %w", alloc.ID, err)
	}
	err = s.write(alloc.ID, string(allocKey), data, grouped, func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, alloc.ID)
		if err != nil {
			return err
		}
		return b.Put(allocKey, data)
	})
	return s.txError(fmt.Sprintf("put allocation %q", alloc.ID), err)
}

// DeleteAllocationBucket removes an allocation and all its tasks' state.
func (s *BoltStateDB) DeleteAllocationBucket(allocID string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		s.cache.forgetPrefix(allocID, "")
		root := tx.Bucket(allocationsBucket)
		if root == nil || allocID == "" {
			return nil
		}
		if err := root.DeleteBucket([]byte(allocID)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return nil
	})
	return s.txError(fmt.Sprintf("delete allocation %q", allocID), err)
}

// GetTaskRunnerState returns a task's local state and task state; both
// are nil when nothing was stored.
func (s *BoltStateDB) GetTaskRunnerState(allocID, taskName string) (*LocalState, *structs.TaskState, error) {
	if s.closed.Load() {
		return nil, nil, ErrClosed
	}
	var (
		ls *LocalState
		ts *structs.TaskState
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		b := taskBucket(tx, allocID, taskName)
		if b == nil {
			return nil
		}
		var err error
		if raw := b.Get(localStateKey); raw != nil {
			if ls, err = decodeLocalState(raw); err != nil {
				return fmt.Errorf("state file %s: local state: %w", s.path, err)
			}
		}
		if raw := b.Get(taskStateKey); raw != nil {
			if ts, err = decodeTaskState(raw); err != nil {
				return fmt.Errorf("state file %s: task state: %w", s.path, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, s.txError(fmt.Sprintf("get state of task %q of allocation %q", taskName, allocID), err)
	}
	return ls, ts, nil
}

// PutTaskRunnerLocalState stores a task's local state.
func (s *BoltStateDB) PutTaskRunnerLocalState(allocID, taskName string, ls *LocalState) error {
	return s.putTaskValue(allocID, taskName, localStateKey, ls, grouped)
}

// PutTaskState stores a task's TaskState.
func (s *BoltStateDB) PutTaskState(allocID, taskName string, ts *structs.TaskState) error {
	return s.putTaskValue(allocID, taskName, taskStateKey, ts, grouped)
}

// putTaskValue writes one of a task's values; the benchmarks compare the
// write modes.
func (s *BoltStateDB) putTaskValue(allocID, taskName string, key []byte, v any, mode writeMode) error {
	what := fmt.Sprintf("put %s of task %q of allocation %q", key, taskName, allocID)
	if allocID == "" {
		return structs.Invalid("%s: missing allocation ID", what)
	}
	data, err := encodeValue(v)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	err = s.write(allocID, taskCacheKey(taskName, key), data, mode, func(tx *bolt.Tx) error {
		ab, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		tb, err := ab.CreateBucketIfNotExists(taskBucketName(taskName))
		if err != nil {
			return err
		}
		return tb.Put(key, data)
	})
	return s.txError(what, err)
}

// DeleteTaskBucket removes one task's state.
func (s *BoltStateDB) DeleteTaskBucket(allocID, taskName string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		s.cache.forgetPrefix(allocID, taskCacheKey(taskName, nil))
		root := tx.Bucket(allocationsBucket)
		if root == nil || allocID == "" {
			return nil
		}
		ab := root.Bucket([]byte(allocID))
		if ab == nil {
			return nil
		}
		if err := ab.DeleteBucket(taskBucketName(taskName)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return nil
	})
	return s.txError(fmt.Sprintf("delete task %q of allocation %q", taskName, allocID), err)
}

// GetNodeIdentity returns the node's ID and secret; empty strings when
// none was stored yet.
func (s *BoltStateDB) GetNodeIdentity() (*NodeIdentity, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	id := &NodeIdentity{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(nodeBucket)
		if b == nil {
			return corruptError(s.path, fmt.Errorf("bucket %q is missing", nodeBucket))
		}
		raw := b.Get(identityKey)
		if raw == nil {
			return nil
		}
		var stored *NodeIdentity
		if err := decodeValue(raw, &stored); err != nil {
			return fmt.Errorf("state file %s: node identity: %w", s.path, err)
		}
		if stored != nil {
			id = stored
		}
		return nil
	})
	if err != nil {
		return nil, s.txError("get node identity", err)
	}
	return id, nil
}

// PutNodeIdentity stores the node's ID and secret.
func (s *BoltStateDB) PutNodeIdentity(id *NodeIdentity) error {
	if id == nil {
		return structs.Invalid("put node identity: nil identity")
	}
	data, err := encodeValue(id)
	if err != nil {
		return fmt.Errorf("put node identity: %w", err)
	}
	err = s.write("", string(identityKey), data, grouped, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(nodeBucket)
		if err != nil {
			return err
		}
		return b.Put(identityKey, data)
	})
	return s.txError("put node identity", err)
}

// Close closes the file. Calls after Close return ErrClosed.
func (s *BoltStateDB) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close state file %s: %w", s.path, err)
	}
	return nil
}

// write runs put in a write transaction unless data is what is already
// committed under the cache key; put must be idempotent (a group commit
// may run it more than once).
func (s *BoltStateDB) write(allocID, cacheKey string, data []byte, mode writeMode, put func(*bolt.Tx) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.cache.unchanged(allocID, cacheKey, data) {
		return nil
	}
	fn := func(tx *bolt.Tx) error {
		if err := put(tx); err != nil {
			return err
		}
		s.cache.staged(tx, allocID, cacheKey, data)
		return nil
	}
	switch mode {
	case boltBatch:
		return s.db.Batch(fn)
	case solo:
		return s.db.Update(fn)
	}
	return s.group.write(fn)
}

// txError wraps a transaction's error, mapping a closed database to
// ErrClosed.
func (s *BoltStateDB) txError(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen), errors.Is(err, ErrClosed):
		return ErrClosed
	}
	return fmt.Errorf("%s: %w", what, err)
}

// allocBucket returns the alloc's bucket, creating it.
func allocBucket(tx *bolt.Tx, allocID string) (*bolt.Bucket, error) {
	root, err := tx.CreateBucketIfNotExists(allocationsBucket)
	if err != nil {
		return nil, err
	}
	return root.CreateBucketIfNotExists([]byte(allocID))
}

// taskBucket returns the task's bucket, or nil.
func taskBucket(tx *bolt.Tx, allocID, taskName string) *bolt.Bucket {
	root := tx.Bucket(allocationsBucket)
	if root == nil || allocID == "" {
		return nil
	}
	ab := root.Bucket([]byte(allocID))
	if ab == nil {
		return nil
	}
	return ab.Bucket(taskBucketName(taskName))
}
