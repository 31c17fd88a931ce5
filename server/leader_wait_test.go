package server

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// recordHandler sends the messages of the records it handles to msgs
// (never blocking: a full channel drops them).
type recordHandler struct {
	msgs chan slog.Record
}

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.msgs <- r:
	default:
	}
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// waitRecord returns the next record whose message is msg.
func waitRecord(t *testing.T, msgs <-chan slog.Record, msg string) slog.Record {
	t.Helper()
	for r := range msgs {
		if r.Message == msg {
			return r
		}
	}
	t.Fatalf("log closed before %q", msg)
	return slog.Record{}
}

// TestNewServerWaitsForLeadership: a server that cannot win an election
// (its raft configuration names a second voter that never answers) keeps
// waiting past the old 10 s limit, logging its progress every few
// seconds, until its context ends the wait; then nothing it started is
// left running (goleak).
func TestNewServerWaitsForLeadership(t *testing.T) {
	const name = "lonely"
	store := raft.NewInmemStore()
	snaps := raft.NewInmemSnapshotStore()
	_, trans := raft.NewInmemTransport(raft.ServerAddress(name))
	defer trans.Close()
	rc := raft.DefaultConfig()
	rc.LocalID = name
	conf := raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: name, Address: name},
		{Suffrage: raft.Voter, ID: "absent", Address: "absent"},
	}}
	if err := raft.BootstrapCluster(rc, store, store, snaps, trans, conf); err != nil {
		t.Fatal(err)
	}

	clock := newArmedClock()
	logs := make(chan slog.Record, 1024)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		s, err := NewServer(ctx, &Config{NodeName: name, Clock: clock, Logger: slog.New(recordHandler{msgs: logs}),
			LogStore: store, StableStore: store, SnapshotStore: snaps, Transport: trans})
		if s != nil {
			err = errors.Join(errors.New("NewServer returned a server that is not leader"), s.Shutdown())
		}
		done <- err
	}()

	for round := 1; round <= 3; round++ { // 15 s of fake time: past the old limit
		clock.waitArmed(t, leaderProgressInterval)
		clock.Advance(leaderProgressInterval)
		r := waitRecord(t, logs, "waiting to become raft leader")
		var waited string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "waited" {
				waited = a.Value.String()
			}
			return true
		})
		if want := (leaderProgressInterval * time.Duration(round)).String(); waited != want {
			t.Fatalf("round %d: waited = %q, want %q", round, waited, want)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("NewServer returned before its context ended: %v", err)
	default:
	}
	cancel(errors.New("agent caught SIGTERM"))
	err := <-done
	if structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("err = %v, want KindUnavailable", err)
	}
}
