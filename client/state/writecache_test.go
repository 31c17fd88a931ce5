package state

import (
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestWriteCache(t *testing.T) {
	db := openTestBolt(t, t.TempDir())
	c := newWriteCache()
	a, b := []byte("value A"), []byte("value B")
	errRollback := errors.New("rollback")

	// stage writes data for the key in a transaction that commits or not.
	stage := func(data []byte, commit bool, during func()) {
		err := db.db.Update(func(tx *bolt.Tx) error {
			c.staged(tx, "alloc", "k", data)
			if during != nil {
				during()
			}
			if !commit {
				return errRollback
			}
			return nil
		})
		if commit {
			mustNil(t, err)
		}
	}

	if c.unchanged("alloc", "k", a) {
		t.Fatal("empty cache reports a value unchanged")
	}
	stage(a, true, func() {
		if c.unchanged("alloc", "k", a) {
			t.Error("uncommitted value reported unchanged")
		}
	})
	if !c.unchanged("alloc", "k", a) {
		t.Fatal("committed value not reported unchanged")
	}
	if c.unchanged("alloc", "k", b) || c.unchanged("other", "k", a) || c.unchanged("alloc", "j", a) {
		t.Error("different value or key reported unchanged")
	}

	// A write of B in flight, then rolled back: A is no longer known to
	// be on disk from the cache's point of view (safe: it is rewritten).
	stage(b, false, func() {
		if c.unchanged("alloc", "k", a) {
			t.Error("A reported unchanged while B is being written")
		}
	})
	if c.unchanged("alloc", "k", a) || c.unchanged("alloc", "k", b) {
		t.Error("rolled-back write left a usable entry")
	}

	stage(b, true, nil)
	c.forgetPrefix("alloc", "k")
	if c.unchanged("alloc", "k", b) {
		t.Error("forgotten key reported unchanged")
	}
	stage(b, true, nil)
	c.forgetPrefix("alloc", "")
	if c.unchanged("alloc", "k", b) {
		t.Error("forgotten alloc's key reported unchanged")
	}
}
