package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Schema version 1, the layout of the first drover releases:
//
//	meta/
//	  version                  "1"
//	allocs/
//	  <alloc ID>               JSON structs.Allocation
//	tasks/
//	  <alloc ID>/<task name>   JSON {"LocalState": LocalState, "TaskState": structs.TaskState}
//	node/
//	  id                       the node ID, raw string
//	  secret_id                the node's secret, raw string
//
// Version 2 gives each allocation a bucket of its own (deleting an
// allocation deletes one bucket instead of scanning a key range) and each
// task's two values their own keys (a TaskRunner rewrites its task state
// on every event without re-encoding its local state), and stores the
// node identity as one JSON value.
var (
	v1AllocsBucket = []byte("allocs")
	v1TasksBucket  = []byte("tasks")
	v1NodeIDKey    = []byte("id")
	v1NodeSecret   = []byte("secret_id")
)

// v1TaskValue is a version 1 task value. The inner values are carried to
// version 2 byte for byte, undecoded: a value this drover cannot read is
// kept, and reported when it is read, rather than lost in the upgrade.
type v1TaskValue struct {
	LocalState json.RawMessage
	TaskState  json.RawMessage
}

// backupPath is where the copy kept before an upgrade from version N
// goes: state.db.v<N>.bak beside the state file.
func backupPath(path string, version int) string {
	return path + ".v" + strconv.Itoa(version) + ".bak"
}

// upgradeFromV1 copies the file to state.db.v1.bak, then converts it to
// the current layout in one transaction: a crash leaves either the old
// file or the new one.
func (s *BoltStateDB) upgradeFromV1() error {
	bak := backupPath(s.path, 1)
	if err := s.backup(bak); err != nil {
		return fmt.Errorf("upgrade state file %s: back up to %s: %w", s.path, bak, err)
	}
	var allocs, tasks int
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		allocs, tasks, err = convertV1(tx)
		return err
	})
	if err != nil {
		return fmt.Errorf("upgrade state file %s from schema version 1 to %d (unchanged; a copy is in %s): %w",
			s.path, SchemaVersion, bak, err)
	}
	s.logger.Info("upgraded client state file", "from_version", 1, "to_version", SchemaVersion,
		"backup", bak, "allocations", allocs, "tasks", tasks)
	return nil
}

// convertV1 rewrites a version 1 layout as version 2 within tx.
func convertV1(tx *bolt.Tx) (allocs, tasks int, err error) {
	root, err := tx.CreateBucket(allocationsBucket)
	if err != nil {
		return 0, 0, fmt.Errorf("create bucket %q: %w", allocationsBucket, err)
	}
	if old := tx.Bucket(v1AllocsBucket); old != nil {
		err := old.ForEach(func(id, raw []byte) error {
			if raw == nil {
				return fmt.Errorf("bucket %q: unexpected nested bucket %q", v1AllocsBucket, id)
			}
			ab, err := root.CreateBucketIfNotExists(id)
			if err != nil {
				return fmt.Errorf("allocation %q: %w", id, err)
			}
			allocs++
			return ab.Put(allocKey, bytes.Clone(raw))
		})
		if err != nil {
			return 0, 0, err
		}
		if err := tx.DeleteBucket(v1AllocsBucket); err != nil {
			return 0, 0, err
		}
	}
	if old := tx.Bucket(v1TasksBucket); old != nil {
		err := old.ForEach(func(k, raw []byte) error {
			if raw == nil {
				return fmt.Errorf("bucket %q: unexpected nested bucket %q", v1TasksBucket, k)
			}
			allocID, taskName, ok := bytes.Cut(k, []byte("/"))
			if !ok || len(allocID) == 0 {
				return fmt.Errorf("bucket %q: key %q is not <alloc ID>/<task name>", v1TasksBucket, k)
			}
			ab, err := root.CreateBucketIfNotExists(allocID)
			if err != nil {
				return fmt.Errorf("allocation %q: %w", allocID, err)
			}
			tb, err := ab.CreateBucketIfNotExists(taskBucketName(string(taskName)))
			if err != nil {
				return fmt.Errorf("task %q of allocation %q: %w", taskName, allocID, err)
			}
			tasks++
			return putV1Task(tb, raw)
		})
		if err != nil {
			return 0, 0, err
		}
		if err := tx.DeleteBucket(v1TasksBucket); err != nil {
			return 0, 0, err
		}
	}
	node, err := tx.CreateBucketIfNotExists(nodeBucket)
	if err != nil {
		return 0, 0, err
	}
	if id, secret := node.Get(v1NodeIDKey), node.Get(v1NodeSecret); id != nil || secret != nil {
		data, err := encodeValue(&NodeIdentity{ID: string(id), SecretID: string(secret)})
		if err != nil {
			return 0, 0, err
		}
		if err := node.Put(identityKey, data); err != nil {
			return 0, 0, err
		}
		for _, k := range [][]byte{v1NodeIDKey, v1NodeSecret} {
			if err := node.Delete(k); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := tx.Bucket(metaBucket).Put(versionKey, []byte(strconv.Itoa(SchemaVersion))); err != nil {
		return 0, 0, err
	}
	return allocs, tasks, nil
}

// putV1Task splits a version 1 task value into the task bucket's keys. A
// value that is not the expected JSON object is kept whole under
// task_state, where reading it reports the decode error.
func putV1Task(tb *bolt.Bucket, raw []byte) error {
	var v v1TaskValue
	if err := json.Unmarshal(raw, &v); err != nil {
		return tb.Put(taskStateKey, bytes.Clone(raw))
	}
	if len(v.LocalState) > 0 && !bytes.Equal(v.LocalState, []byte("null")) {
		if err := tb.Put(localStateKey, bytes.Clone(v.LocalState)); err != nil {
			return err
		}
	}
	if len(v.TaskState) > 0 && !bytes.Equal(v.TaskState, []byte("null")) {
		if err := tb.Put(taskStateKey, bytes.Clone(v.TaskState)); err != nil {
			return err
		}
	}
	return nil
}

// backup writes a consistent copy of the file to dst through a temporary
// file, synced and renamed into place.
func (s *BoltStateDB) backup(dst string) error {
	tmp := dst + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(f)
		return err
	})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
