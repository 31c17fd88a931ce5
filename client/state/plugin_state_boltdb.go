package state

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/drover-io/drover/structs"
)

// Driver plugin states bypass the write cache: they are written rarely
// (when a plugin is launched) and always differ from what is stored.

// GetDriverPluginStates returns the stored driver plugin states; a file
// without the driver_plugins bucket has none.
func (s *BoltStateDB) GetDriverPluginStates() (map[string][]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	out := map[string][]byte{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(driverPluginsBkt)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		return nil, s.txError("get driver plugin states", err)
	}
	return out, nil
}

// PutDriverPluginState stores a driver plugin's state.
func (s *BoltStateDB) PutDriverPluginState(name string, data []byte) error {
	if name == "" {
		return structs.Invalid("put driver plugin state: missing plugin name")
	}
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(driverPluginsBkt)
		if err != nil {
			return err
		}
		// bbolt rejects a nil value; an empty state is stored as empty.
		if data == nil {
			data = []byte{}
		}
		return b.Put([]byte(name), data)
	})
	return s.txError(fmt.Sprintf("put driver plugin %q state", name), err)
}

// DeleteDriverPluginState removes a driver plugin's state.
func (s *BoltStateDB) DeleteDriverPluginState(name string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(driverPluginsBkt)
		if b == nil {
			return nil
		}
		if err := b.Delete([]byte(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return nil
	})
	return s.txError(fmt.Sprintf("delete driver plugin %q state", name), err)
}
