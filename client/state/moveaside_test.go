package state

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMoveAside(t *testing.T) {
	now := time.Date(2026, 11, 23, 1, 2, 3, 0, time.FixedZone("CET", 3600))
	wantName := "state.db.corrupt-20261123T000203Z"

	dir := t.TempDir()
	path := bigStateFile(t, dir)
	mustNil(t, os.Truncate(path, 3*4096)) // corrupt: the agent refuses it
	before, err := os.ReadFile(path)
	mustNil(t, err)
	if _, err := openBoltStateDB(dir, nil, 100*time.Millisecond); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open corrupt file: %v", err)
	}

	moved, err := MoveAside(dir, now)
	mustNil(t, err)
	if moved != filepath.Join(dir, "client", wantName) {
		t.Errorf("moved to %s, want .../client/%s", moved, wantName)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file still there: %v", err)
	}
	after, err := os.ReadFile(moved)
	mustNil(t, err)
	if !bytes.Equal(before, after) {
		t.Error("moved file's content changed")
	}

	// The agent now starts with empty state.
	db := openTestBolt(t, dir)
	if allocs := sortedAllocs(t, db); len(allocs) != 0 {
		t.Errorf("fresh state has %d allocs", len(allocs))
	}
	mustNil(t, db.Close())

	// The same timestamp again: the target is taken, nothing is renamed.
	if _, err := MoveAside(dir, now); err == nil {
		t.Error("MoveAside over an existing target succeeded")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("state file moved despite the error: %v", err)
	}
}

func TestMoveAsideRefuses(t *testing.T) {
	now := time.Unix(0, 0)
	t.Run("missing file", func(t *testing.T) {
		_, err := MoveAside(t.TempDir(), now)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want not exist", err)
		}
	})
	t.Run("file in use", func(t *testing.T) {
		dir := t.TempDir()
		db := openTestBolt(t, dir)
		_, err := MoveAside(dir, now)
		if !errors.Is(err, ErrLocked) {
			t.Errorf("err = %v, want ErrLocked", err)
		}
		mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "still usable"}))
	})
}
