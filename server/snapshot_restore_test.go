package server

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/raftbolt"
	"github.com/drover-io/drover/structs"
)

// TestSnapshotRestoreThenRestart: restoring a snapshot leaves raft's log
// with no entry at the restore's index (the snapshot covers it). raftbolt,
// which refuses a log with a gap, must not find one at the next start:
// raft drops the entries before a restore from a monotonic store.
func TestSnapshotRestoreThenRestart(t *testing.T) {
	dir := t.TempDir()
	p := openPersistentRaft(t, dir)
	s, err := NewServer(context.Background(), p.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	registerJob(t, s, testJob("kept", 1, 100, 100))
	saved, err := rpcapi.SnapshotSave.Call(ctx, s, &structs.SnapshotSaveRequest{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, s, testJob("dropped", 1, 100, 100))
	if _, err := rpcapi.SnapshotRestore.Call(ctx, s, &structs.SnapshotRestoreRequest{Archive: saved.Archive}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	registerJob(t, s, testJob("after", 1, 100, 100)) // entries after the restore
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := p.store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := raftbolt.Open(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatalf("reopen the raft store after a restore: %v", err)
	}
	p.store = store
	s, err = NewServer(ctx, p.config())
	if err != nil {
		t.Fatalf("restart after a restore: %v", err)
	}
	defer func() {
		if err := s.Shutdown(); err != nil {
			t.Error(err)
		}
		_ = store.Close()
	}()
	for id, want := range map[string]bool{"kept": true, "dropped": false, "after": true} {
		j, err := s.State().JobByID(nil, structs.DefaultNamespace, id)
		if err != nil || (j != nil) != want {
			t.Errorf("job %s present = %v, want %v (%v)", id, j != nil, want, err)
		}
	}
}
