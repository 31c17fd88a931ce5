package server

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// TestRestartFromStores restarts a server on the raft stores of a previous
// one: the state is rebuilt from the log and the snapshot, and pending
// work resumes.
func TestRestartFromStores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		cfg := func() *Config {
			return &Config{NodeName: "persist", LogStore: logs, StableStore: logs, SnapshotStore: snaps}
		}
		s1, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		registerNode(t, s1, testNode("n1", 1000, 1000))
		r := registerJob(t, s1, testJob("web", 1, 100, 100))
		waitEvalStatus(t, s1, r.EvalID, structs.EvalStatusComplete)
		if err := s1.raft.Snapshot().Error(); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		r2 := registerJob(t, s1, testJob("later", 1, 100, 100))
		waitEvalStatus(t, s1, r2.EvalID, structs.EvalStatusComplete)
		want := s1.State().LatestIndex()
		if err := s1.Shutdown(); err != nil {
			t.Fatal(err)
		}

		s2, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s2.Shutdown(); err != nil {
				t.Error(err)
			}
		}()
		settled(t, "state replayed", func() (bool, string) {
			return s2.State().LatestIndex() >= want, "behind"
		})
		for _, id := range []string{"web", "later"} {
			if n := len(allocsOf(t, s2, id, structs.AllocDesiredStatusRun)); n != 1 {
				t.Fatalf("%s: %d allocs after restart", id, n)
			}
		}
		n, _ := s2.State().NodeByID(nil, "n1")
		if n == nil || n.SecretID != "secret-n1" {
			t.Fatalf("node after restart = %+v", n)
		}
		// The node's heartbeat timer runs again on the new leader.
		if s2.heartbeats.Len() != 1 {
			t.Fatalf("heartbeat timers = %d", s2.heartbeats.Len())
		}
	})
}
