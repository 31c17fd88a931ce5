package raftbolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketLogs = []byte("logs")
	bucketConf = []byte("conf")
)

// ErrKeyNotFound is returned by Get and GetUint64 for a key never set. Its
// text is "not found": raft recognises a missing key by that text.
var ErrKeyNotFound = errors.New("not found")

// DefaultOpenTimeout is how long Open waits for another process to release
// the file.
const DefaultOpenTimeout = 5 * time.Second

// Store is a raft.LogStore and raft.StableStore backed by one bbolt file.
// It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	path string
	mh   *codec.MsgpackHandle
}

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// IsMonotonic implements raft.MonotonicLogStore: the store's entries are
// one unbroken sequence (Open refuses a gap as damage), so raft must drop
// the entries before a snapshot it restores or installs rather than leave
// a gap at the snapshot's index, as it does for other stores.
func (s *Store) IsMonotonic() bool { return true }

// Open opens the store at path, creating it (mode 0600) when no file is
// there. An existing file is inspected read-only first and refused,
// untouched, when it is not a sound raft store: ErrCorrupt (empty, cut
// short, garbage, inconsistent pages, undecodable or missing entries) or
// ErrLocked (another process holds it for longer than
// DefaultOpenTimeout). The error names the file and says what to do.
func Open(path string) (*Store, error) {
	return open(path, DefaultOpenTimeout)
}

func open(path string, timeout time.Duration) (*Store, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := create(path, timeout); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("raft store %s: %w", path, err)
	case info.Size() == 0:
		// Open creates files whole (create), so an empty one lost its
		// content: starting on it would forget every committed entry.
		return nil, corruptError(path, errors.New("the file is empty"))
	default:
		if err := inspect(path, info.Size(), timeout); err != nil {
			return nil, err
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		return nil, classifyOpenError(path, err)
	}
	return &Store{db: db, path: path, mh: &codec.MsgpackHandle{}}, nil
}

// create makes a new store at path: it is written whole under a temporary
// name and then renamed, so that a crash never leaves a half-made file
// that a later start would take for a damaged one.
func create(path string, timeout time.Duration) error {
	tmp := path + ".new"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("create raft store %s: %w", path, err)
	}
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		return fmt.Errorf("create raft store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketLogs, bucketConf} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("create raft store %s: %w", path, err)
	}
	return nil
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

// Close closes the file.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close raft store %s: %w", s.path, err)
	}
	return nil
}

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

func indexKey(i uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], i)
	return k[:]
}

// FirstIndex returns the first index written, 0 for an empty log.
func (s *Store) FirstIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().First(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// LastIndex returns the last index written, 0 for an empty log.
func (s *Store) LastIndex() (uint64, error) {
	var idx uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().Last(); k != nil {
			idx = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return idx, err
}

// GetLog reads the entry at index into log; raft.ErrLogNotFound if absent.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLogs).Get(indexKey(index))
		if v == nil {
			return raft.ErrLogNotFound
		}
		if err := codec.NewDecoderBytes(v, s.mh).Decode(log); err != nil {
			return fmt.Errorf("decode raft log %d: %w", index, err)
		}
		return nil
	})
}

// StoreLog appends one entry.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs appends entries in one transaction.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		for _, l := range logs {
			var buf bytes.Buffer
			if err := codec.NewEncoder(&buf, s.mh).Encode(l); err != nil {
				return fmt.Errorf("encode raft log %d: %w", l.Index, err)
			}
			if err := b.Put(indexKey(l.Index), buf.Bytes()); err != nil {
				return fmt.Errorf("store raft log %d: %w", l.Index, err)
			}
		}
		return nil
	})
}

// DeleteRange removes the entries from min to max inclusive.
func (s *Store) DeleteRange(min, max uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(indexKey(min)); k != nil; k, _ = c.Next() {
			if binary.BigEndian.Uint64(k) > max {
				break
			}
			if err := c.Delete(); err != nil {
				return fmt.Errorf("delete raft logs [%d, %d]: %w", min, max, err)
			}
		}
		return nil
	})
}

// Set stores a value.
func (s *Store) Set(key, val []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConf).Put(key, val)
	})
}

// Get returns a copy of a value, or ErrKeyNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketConf).Get(key)
		if v == nil {
			return ErrKeyNotFound
		}
		out = bytes.Clone(v)
		return nil
	})
	return out, err
}

// SetUint64 stores an integer value.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, indexKey(val))
}

// GetUint64 returns an integer value, or ErrKeyNotFound.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raft store key %q: value of %d bytes is not an integer", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
