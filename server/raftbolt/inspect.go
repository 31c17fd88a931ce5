package raftbolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Errors that Open can wrap; test with errors.Is. The error's text names
// the file and says what to do.
var (
	// ErrLocked means another process (another agent with the same
	// data_dir) holds the raft store.
	ErrLocked = errors.New("raft store is locked by another process")
	// ErrCorrupt means the file is not a readable raft store. It was
	// left as it was.
	ErrCorrupt = errors.New("raft store is corrupt")
)

// fileError is an error about the store's file: its text is complete, and
// it wraps both its kind (ErrCorrupt, ...) and its cause.
type fileError struct {
	kind  error
	cause error
	msg   string
}

func (e *fileError) Error() string   { return e.msg }
func (e *fileError) Unwrap() []error { return []error{e.kind, e.cause} }

func corruptError(path string, cause error) error {
	return &fileError{kind: ErrCorrupt, cause: cause, msg: fmt.Sprintf(
		"raft store %s is corrupt: %v; it was left untouched. The server's cluster state (jobs, "+
			"allocations, nodes) lives in this file and the snapshots beside it: restore the "+
			"directory from a backup, or, to start this server with an empty cluster state (every job "+
			"is forgotten; clients stop the allocations it no longer knows), move the directory aside",
		path, cause)}
}

func lockedError(path string, cause error) error {
	return &fileError{kind: ErrLocked, cause: cause, msg: fmt.Sprintf(
		"raft store %s is locked by another process: is another drover agent running with the same data_dir?", path)}
}

// classifyOpenError turns an error from opening a bbolt file into one of
// the errors above where it is one.
func classifyOpenError(path string, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return lockedError(path, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
		return corruptError(path, err)
	}
	return fmt.Errorf("open raft store %s: %w", path, err)
}

// inspect checks all of an existing file before anything writes to it:
// first the bounds of every page, key and value bbolt will reach
// (walkPages, with plain reads), then, opened read-only, every raft entry
// (its key, that it decodes, and that the indexes have no gap: raft panics
// on a missing entry at start-up) and bbolt's own consistency check.
//
// Is bbolt's own panic on damage recoverable? Its assertions panic, which
// recover catches on the goroutine that reads; but a damaged length makes
// it read its memory map past the end of the file, a memory fault that is
// fatal to the process unless the goroutine asked for a panic
// (debug.SetPanicOnFault), and tx.Check runs on a goroutine of its own
// that has neither. Hence the bounds walk first, and the reads here with
// both.
func inspect(path string, size int64, timeout time.Duration) (err error) {
	if err := walkPages(path, size); err != nil {
		return corruptError(path, err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = corruptError(path, fmt.Errorf("reading it failed: %v", r))
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return classifyOpenError(path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		logs, conf := tx.Bucket(bucketLogs), tx.Bucket(bucketConf)
		if logs == nil || conf == nil {
			return corruptError(path, errors.New("it lacks the logs or conf bucket (not a drover raft store?)"))
		}
		if err := checkLogs(logs); err != nil {
			return corruptError(path, err)
		}
		if err := conf.ForEach(func(k, v []byte) error { return nil }); err != nil {
			return corruptError(path, err)
		}
		if err := checkTx(tx); err != nil {
			return corruptError(path, err)
		}
		return nil
	})
}

// checkLogs reads every raft entry: 8-byte keys in an unbroken sequence,
// each value a raft.Log of that index.
func checkLogs(b *bolt.Bucket) error {
	mh := &codec.MsgpackHandle{}
	var prev uint64
	first := true
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("raft entry key %x is not an index", k)
		}
		idx := binary.BigEndian.Uint64(k)
		if !first && idx != prev+1 {
			return fmt.Errorf("raft entries %d to %d are missing", prev+1, idx-1)
		}
		var l raft.Log
		if err := codec.NewDecoderBytes(v, mh).Decode(&l); err != nil {
			return fmt.Errorf("raft entry %d does not decode: %w", idx, err)
		}
		if l.Index != idx {
			return fmt.Errorf("raft entry under key %d holds index %d", idx, l.Index)
		}
		prev, first = idx, false
		return nil
	})
}

// checkTx runs bbolt's consistency check and returns its first few errors.
func checkTx(tx *bolt.Tx) error {
	var msgs []string
	for err := range tx.Check() {
		if len(msgs) < 3 {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("consistency check failed: %s", strings.Join(msgs, "; "))
	}
	return nil
}
