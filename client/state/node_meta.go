package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

// The node's dynamic metadata is one JSON object under the node bucket
// (node/meta), added to schema version 2 without a new version: files
// written before it lack the key, which reads as "none", and older
// drovers ignore it.

// GetNodeMeta returns the node's stored dynamic metadata; nil when none
// was stored. An entry that does not decode is a corrupt state file: the
// error says so and the entry is left as it is.
func (s *BoltStateDB) GetNodeMeta() (map[string]*string, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	var out map[string]*string
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(nodeBucket)
		if b == nil {
			return corruptError(s.path, fmt.Errorf("bucket %q is missing", nodeBucket))
		}
		raw := b.Get(nodeMetaKey)
		if raw == nil {
			return nil
		}
		if err := decodeValue(raw, &out); err != nil {
			return corruptError(s.path, fmt.Errorf("the node's dynamic metadata (%s/%s): %w", nodeBucket, nodeMetaKey, err))
		}
		return nil
	})
	if err != nil {
		return nil, s.txError("get node metadata", err)
	}
	return out, nil
}

// PutNodeMeta stores the node's dynamic metadata.
func (s *BoltStateDB) PutNodeMeta(meta map[string]*string) error {
	data, err := encodeValue(meta)
	if err != nil {
		return fmt.Errorf("put node metadata: %w", err)
	}
	err = s.write("", string(nodeMetaKey), data, grouped, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(nodeBucket)
		if err != nil {
			return err
		}
		return b.Put(nodeMetaKey, data)
	})
	return s.txError("put node metadata", err)
}

// GetNodeMeta returns a copy of the node's stored dynamic metadata.
func (m *MemDB) GetNodeMeta() (map[string]*string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	return structs.CopyNodeMeta(m.nodeMeta), nil
}

// PutNodeMeta stores a copy of the node's dynamic metadata.
func (m *MemDB) PutNodeMeta(meta map[string]*string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.nodeMeta = structs.CopyNodeMeta(meta)
	return nil
}
