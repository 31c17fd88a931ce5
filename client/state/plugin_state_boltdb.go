package state

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/drover-io/drover/structs"
)

// Plugin states bypass the write cache: they are written rarely (when a
// plugin is launched) and always differ from what is stored. Driver and
// device plugins have a bucket each (driver_plugins, device_plugins).

// GetDriverPluginStates returns the stored driver plugin states; a file
// without the driver_plugins bucket has none.
func (s *BoltStateDB) GetDriverPluginStates() (map[string][]byte, error) {
	return s.getPluginStates(driverPluginsBkt, "driver")
}

// PutDriverPluginState stores a driver plugin's state.
func (s *BoltStateDB) PutDriverPluginState(name string, data []byte) error {
	return s.putPluginState(driverPluginsBkt, "driver", name, data)
}

// DeleteDriverPluginState removes a driver plugin's state.
func (s *BoltStateDB) DeleteDriverPluginState(name string) error {
	return s.deletePluginState(driverPluginsBkt, "driver", name)
}

// GetDevicePluginStates returns the stored device plugin states; a file
// without the device_plugins bucket (an older one) has none.
func (s *BoltStateDB) GetDevicePluginStates() (map[string][]byte, error) {
	return s.getPluginStates(devicePluginsBkt, "device")
}

// PutDevicePluginState stores a device plugin's state.
func (s *BoltStateDB) PutDevicePluginState(name string, data []byte) error {
	return s.putPluginState(devicePluginsBkt, "device", name, data)
}

// DeleteDevicePluginState removes a device plugin's state.
func (s *BoltStateDB) DeleteDevicePluginState(name string) error {
	return s.deletePluginState(devicePluginsBkt, "device", name)
}

func (s *BoltStateDB) getPluginStates(bucket []byte, kind string) (map[string][]byte, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	out := map[string][]byte{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out[string(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		return nil, s.txError(fmt.Sprintf("get %s plugin states", kind), err)
	}
	return out, nil
}

func (s *BoltStateDB) putPluginState(bucket []byte, kind, name string, data []byte) error {
	if name == "" {
		return structs.Invalid("put %s plugin state: missing plugin name", kind)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		// bbolt rejects a nil value; an empty state is stored as empty.
		if data == nil {
			data = []byte{}
		}
		return b.Put([]byte(name), data)
	})
	return s.txError(fmt.Sprintf("put %s plugin %q state", kind, name), err)
}

func (s *BoltStateDB) deletePluginState(bucket []byte, kind, name string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		if err := b.Delete([]byte(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return nil
	})
	return s.txError(fmt.Sprintf("delete %s plugin %q state", kind, name), err)
}
