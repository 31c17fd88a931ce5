package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// raftApplyTimeout bounds how long one command may wait to be committed.
const raftApplyTimeout = 30 * time.Second

// setupRaft starts raft over the configured (or in-memory) stores and
// transport. Empty stores are bootstrapped as a single-voter cluster when
// the server runs alone or expects to bootstrap alone (bootstrap_expect =
// 1); a server of a bigger cluster starts without a configuration and
// waits for its peers (bootstrap.go) or for a leader to add it. With
// Recover, existing state is kept and the configuration rewritten to this
// server alone.
func (s *Server) setupRaft() error {
	cfg := s.config
	rc := cfg.RaftConfig // a copy made by setupRaftWithNotify
	rc.LocalID = s.raftID()
	rc.Logger = newRaftLogger(cfg.Logger)

	logs, stable, snaps, trans := cfg.LogStore, cfg.StableStore, cfg.SnapshotStore, s.raftTransport
	if logs == nil || stable == nil {
		mem := raft.NewInmemStore()
		if logs == nil {
			logs = mem
		}
		if stable == nil {
			stable = mem
		}
	}
	if snaps == nil {
		snaps = raft.NewInmemSnapshotStore()
	}
	if trans == nil {
		trans = cfg.Transport
	}
	if trans == nil {
		_, t := raft.NewInmemTransport(raft.ServerAddress(cfg.NodeName))
		trans = t
		s.ownTransport = true
	}
	s.raftTransport = trans

	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fmt.Errorf("check raft state: %w", err)
	}
	self := raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr(),
	}}}
	switch {
	case !existing && cfg.Recover:
		return errors.New("-recover needs this server's existing raft state, and its data_dir holds none")
	case !existing && s.bootstrapsAlone():
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, self); err != nil {
			return fmt.Errorf("bootstrap raft: %w", err)
		}
		s.markBootstrapped()
	case existing:
		if err := checkRaftStores(logs, snaps); err != nil {
			return err
		}
		s.markBootstrapped()
		if cfg.Recover {
			if err := s.recoverRaft(rc, logs, stable, snaps, trans, self); err != nil {
				return err
			}
		}
	}
	r, err := newRaft(rc, s.fsm, logs, stable, snaps, trans)
	if err != nil {
		return err
	}
	s.raft = r
	return nil
}

// bootstrapsAlone reports whether the server forms a cluster by itself
// when its raft state is empty.
func (s *Server) bootstrapsAlone() bool {
	return s.config.Cluster == nil || s.config.Cluster.BootstrapExpect == 1
}

// markBootstrapped records that the raft configuration exists.
func (s *Server) markBootstrapped() {
	if s.cluster != nil {
		s.cluster.bootstrapped.Store(true)
	}
}

// recoverRaft rewrites the raft configuration to self, keeping the state
// (raft.RecoverCluster replays it into a scratch FSM and snapshots it).
func (s *Server) recoverRaft(rc *raft.Config, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore,
	trans raft.Transport, self raft.Configuration) error {
	scratch, err := newFSM(s.logger, nil)
	if err != nil {
		return err
	}
	if err := raft.RecoverCluster(rc, scratch, logs, stable, snaps, trans, self); err != nil {
		return fmt.Errorf("recover raft (-recover): %w", err)
	}
	s.logger.Warn("recovered raft: this server is now the only voter of its cluster; start the other servers with empty data_dirs to join it",
		"server_id", rc.LocalID, "address", self.Servers[0].Address)
	return nil
}

// ErrDamagedRaftState is wrapped by NewServer's error when the raft log
// and snapshots cannot be replayed: entries are missing, no snapshot can
// be read, or raft gave up on them. Nothing was changed in them.
var ErrDamagedRaftState = errors.New("raft state is damaged")

// damagedError wraps ErrDamagedRaftState with a description.
func damagedError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamagedRaftState, fmt.Sprintf(format, args...))
}

// newRaft is raft.NewRaft, with its panics turned into errors: it panics
// in the calling goroutine, before it starts any of its own, when it
// cannot read an entry it replays.
func newRaft(rc *raft.Config, fsm raft.FSM, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore, trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, damagedError("raft could not replay its log: %v", p)
		}
	}()
	r, err = raft.NewRaft(rc, fsm, logs, stable, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("start raft: %w", err)
	}
	return r, nil
}

// checkRaftStores refuses stores that raft would panic on while it
// replays them: raft restores the newest snapshot it can read, then every
// log entry after it, and panics on the first entry it cannot get. So at
// least one snapshot must open (its checksum holds) when there are any,
// and the log must go on from that snapshot without a gap.
func checkRaftStores(logs raft.LogStore, snaps raft.SnapshotStore) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return fmt.Errorf("read raft log: %w", err)
	}
	last, err := logs.LastIndex()
	if err != nil {
		return fmt.Errorf("read raft log: %w", err)
	}
	metas, err := snaps.List()
	if err != nil {
		return fmt.Errorf("list raft snapshots: %w", err)
	}
	var from uint64 // the last index the snapshot raft restores holds
	var unreadable []string
	for _, m := range metas {
		_, rc, err := snaps.Open(m.ID)
		if err != nil {
			unreadable = append(unreadable, fmt.Sprintf("%s: %v", m.ID, err))
			continue
		}
		_ = rc.Close()
		from = m.Index
		break
	}
	if len(metas) > 0 && from == 0 {
		return damagedError("no raft snapshot can be read (%s)", strings.Join(unreadable, "; "))
	}
	if last > from && first > from+1 {
		what := "there is no snapshot"
		if from > 0 {
			what = fmt.Sprintf("the newest readable snapshot ends at entry %d", from)
		}
		if len(unreadable) > 0 {
			what += fmt.Sprintf(" (unreadable: %s)", strings.Join(unreadable, "; "))
		}
		return damagedError("the raft log starts at entry %d but %s: entries %d to %d are lost", first, what, from+1, first-1)
	}
	return nil
}

// raftApply commits one command through raft and returns its index and the
// FSM's response. An error the FSM returned is returned as err. A command
// that would not decode back is refused before raft sees it (storable).
func (s *Server) raftApply(msgType MessageType, req any) (uint64, any, error) {
	f, err := s.raftPropose(msgType, req, raftApplyTimeout)
	if err != nil {
		return 0, nil, err
	}
	return raftResult(msgType, f)
}

// raftPropose hands one command to raft without waiting for its commit:
// raftResult waits. timeout bounds the wait for raft to take it (0: until
// it does, or answers that this server does not lead).
func (s *Server) raftPropose(msgType MessageType, req any, timeout time.Duration) (raft.ApplyFuture, error) {
	buf, err := s.fsm.proposal(msgType, req)
	if err != nil {
		return nil, err
	}
	return s.raft.Apply(buf, timeout), nil
}

// raftResult waits for a proposed command's commit and the FSM's apply.
func raftResult(msgType MessageType, f raft.ApplyFuture) (uint64, any, error) {
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrRaftShutdown) || errors.Is(err, raft.ErrLeadershipLost) {
			return 0, nil, structs.NewError(structs.KindUnavailable, "apply %s: %v", msgType, err)
		}
		return 0, nil, fmt.Errorf("apply %s: %w", msgType, err)
	}
	resp := f.Response()
	if err, ok := resp.(error); ok {
		return f.Index(), nil, err
	}
	return f.Index(), resp, nil
}
