package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// raftApplyTimeout bounds how long one command may wait to be committed.
const raftApplyTimeout = 30 * time.Second

// setupRaft starts raft over the configured (or in-memory) stores,
// bootstrapping a single-voter cluster when the stores are empty.
func (s *Server) setupRaft() error {
	cfg := s.config
	rc := cfg.RaftConfig // a copy made by setupRaftWithNotify
	rc.LocalID = raft.ServerID(cfg.NodeName)
	if cfg.RaftID != "" {
		rc.LocalID = raft.ServerID(cfg.RaftID)
	}
	rc.Logger = newRaftLogger(cfg.Logger)

	logs, stable, snaps, trans := cfg.LogStore, cfg.StableStore, cfg.SnapshotStore, cfg.Transport
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
		_, t := raft.NewInmemTransport(raft.ServerAddress(cfg.NodeName))
		trans = t
	}
	s.raftTransport = trans

	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fmt.Errorf("check raft state: %w", err)
	}
	if !existing {
		conf := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter, ID: rc.LocalID, Address: trans.LocalAddr(),
		}}}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, conf); err != nil {
			return fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, s.fsm, logs, stable, snaps, trans)
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	s.raft = r
	return nil
}

// raftApply commits one command through raft and returns its index and the
// FSM's response. An error the FSM returned is returned as err. A command
// that would not decode back is refused before raft sees it (storable).
func (s *Server) raftApply(msgType MessageType, req any) (uint64, any, error) {
	buf, err := storable(s.fsm.handle, s.fsm.proposalHandle, msgType, req)
	if err != nil {
		return 0, nil, err
	}
	f := s.raft.Apply(buf, raftApplyTimeout)
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
