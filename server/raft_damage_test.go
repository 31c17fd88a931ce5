package server

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/raftbolt"
	"github.com/drover-io/drover/structs"
)

// persistentRaft is a server's raft storage in dir: a raftbolt store and
// file snapshots, with a log compacted down to one trailing entry.
type persistentRaft struct {
	dir   string
	store *raftbolt.Store
	snaps *raft.FileSnapshotStore
}

func openPersistentRaft(t *testing.T, dir string) *persistentRaft {
	t.Helper()
	store, err := raftbolt.Open(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return &persistentRaft{dir: dir, store: store, snaps: snaps}
}

func (p *persistentRaft) config() *Config {
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
	rc.TrailingLogs = 1
	return &Config{NodeName: "damaged", LogStore: p.store, StableStore: p.store, SnapshotStore: p.snaps, RaftConfig: rc}
}

// TestDamagedSnapshotRefusedNotPanicked: the newest snapshot is damaged
// and the log was compacted past the older one. raft would restore the
// older snapshot and panic on the first missing entry; the server refuses
// to start with ErrDamagedRaftState instead, and changes nothing.
func TestDamagedSnapshotRefusedNotPanicked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		p := openPersistentRaft(t, dir)
		s, err := NewServer(context.Background(), p.config())
		if err != nil {
			t.Fatal(err)
		}
		registerNode(t, s, testNode("n1", 4000, 4096))
		for i, id := range []string{"a", "b"} {
			r := registerJob(t, s, testJob(id, 1, 100, 100))
			waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
			if err := s.raft.Snapshot().Error(); err != nil {
				t.Fatalf("snapshot %d: %v", i, err)
			}
		}
		r := registerJob(t, s, testJob("c", 1, 100, 100)) // entries after the newest snapshot
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		if err := s.Shutdown(); err != nil {
			t.Fatal(err)
		}
		metas, err := p.snaps.List()
		if err != nil || len(metas) != 2 {
			t.Fatalf("snapshots = %d, %v; want 2", len(metas), err)
		}
		if first, _ := p.store.FirstIndex(); first <= metas[1].Index+1 {
			t.Fatalf("log starts at %d: not compacted past the older snapshot (%d)", first, metas[1].Index)
		}
		// Damage the newest snapshot's data.
		bin := filepath.Join(dir, "snapshots", metas[0].ID, "state.bin")
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0xff
		if err := os.WriteFile(bin, data, 0o600); err != nil {
			t.Fatal(err)
		}
		lastBefore, _ := p.store.LastIndex()

		_, err = NewServer(context.Background(), p.config())
		if !errors.Is(err, ErrDamagedRaftState) {
			t.Fatalf("NewServer = %v, want ErrDamagedRaftState", err)
		}
		t.Logf("NewServer: %v", err)
		for _, want := range []string{metas[0].ID, "lost"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %q", want)
			}
		}
		if last, _ := p.store.LastIndex(); last != lastBefore {
			t.Fatalf("log changed from %d to %d", lastBefore, last)
		}
		if err := p.store.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCheckRaftStores(t *testing.T) {
	entries := func(from, to uint64) *raft.InmemStore {
		s := raft.NewInmemStore()
		for i := from; i <= to && i > 0; i++ {
			if err := s.StoreLog(&raft.Log{Index: i, Term: 1, Type: raft.LogCommand}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	snapshotAt := func(index uint64) *raft.InmemSnapshotStore {
		s := raft.NewInmemSnapshotStore()
		if index == 0 {
			return s
		}
		sink, err := s.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sink.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name    string
		logs    *raft.InmemStore
		snaps   *raft.InmemSnapshotStore
		damaged bool
	}{
		{"log only", entries(1, 20), snapshotAt(0), false},
		{"log after a snapshot", entries(8, 20), snapshotAt(10), false},
		{"log right after a snapshot", entries(11, 20), snapshotAt(10), false},
		{"snapshot only", entries(0, 0), snapshotAt(10), false},
		{"log behind a snapshot", entries(1, 5), snapshotAt(10), false},
		{"gap after the snapshot", entries(15, 20), snapshotAt(10), true},
		{"compacted log, no snapshot", entries(5, 20), snapshotAt(0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRaftStores(tt.logs, tt.snaps)
			if got := errors.Is(err, ErrDamagedRaftState); got != tt.damaged {
				t.Fatalf("err = %v, want damaged %v", err, tt.damaged)
			}
		})
	}
}
