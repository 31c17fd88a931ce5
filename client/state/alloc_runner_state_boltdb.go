package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

// An alloc runner's state is one JSON value under the allocation's bucket
// (allocations/<alloc ID>/alloc_runner), added to schema version 2 without
// a new version: files written before it lack the key, which reads as "no
// state", and older drovers ignore it.

// GetAllocRunnerState returns the alloc runner's stored state; nil when
// none was stored.
func (s *BoltStateDB) GetAllocRunnerState(allocID string) (*AllocRunnerLocalState, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	var out *AllocRunnerLocalState
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(allocationsBucket)
		if root == nil || allocID == "" {
			return nil
		}
		ab := root.Bucket([]byte(allocID))
		if ab == nil {
			return nil
		}
		raw := ab.Get(allocRunnerKey)
		if raw == nil {
			return nil
		}
		if err := decodeValue(raw, &out); err != nil {
			return fmt.Errorf("state file %s: alloc runner state: %w", s.path, err)
		}
		return nil
	})
	if err != nil {
		return nil, s.txError(fmt.Sprintf("get alloc runner state of allocation %q", allocID), err)
	}
	return out, nil
}

// PutAllocRunnerState stores the alloc runner's state.
func (s *BoltStateDB) PutAllocRunnerState(allocID string, st *AllocRunnerLocalState) error {
	what := fmt.Sprintf("put alloc runner state of allocation %q", allocID)
	if allocID == "" {
		return structs.Invalid("put alloc runner state: missing allocation ID")
	}
	data, err := encodeValue(st)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	err = s.write(allocID, string(allocRunnerKey), data, grouped, func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		return b.Put(allocRunnerKey, data)
	})
	return s.txError(what, err)
}
