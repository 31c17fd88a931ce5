package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/snapshot"
	"github.com/drover-io/drover/structs"
)

// SnapshotSave implements rpcapi.SnapshotSave: an archive of the state
// store (server/snapshot), as a raft snapshot of the FSM holds it.
func (s *Server) SnapshotSave(_ context.Context, _ *structs.SnapshotSaveRequest) (*structs.SnapshotSaveResponse, error) {
	snap := s.fsm.State().Snapshot()
	var state bytes.Buffer
	if err := (&fsmSnapshot{snap: snap, handle: s.fsm.handle}).write(&state); err != nil {
		return nil, fmt.Errorf("serialize the state: %w", err)
	}
	_, term := s.lastLog()
	meta := snapshot.Meta{Index: snap.LatestIndex(), Term: term, ClusterID: s.clusterID(), Created: s.clock.Now().UTC()}
	count := func(n int, err error) int {
		if err != nil {
			return -1
		}
		return n
	}
	meta.Jobs = count(lenOf(snap.Jobs(nil)))
	meta.Allocations = count(lenOf(snap.Allocs(nil)))
	meta.Evaluations = count(lenOf(snap.Evals(nil)))
	meta.Nodes = count(lenOf(snap.Nodes(nil)))
	meta.Deployments = count(lenOf(snap.Deployments(nil)))
	archive, err := snapshot.Bytes(meta, state.Bytes())
	if err != nil {
		return nil, err
	}
	out := &structs.SnapshotSaveResponse{Archive: archive, Index: meta.Index}
	s.setMeta(&out.QueryMeta)
	out.Index = max(meta.Index, 1)
	return out, nil
}

func lenOf[T any](v []T, err error) (int, error) { return len(v), err }

// SnapshotRestore implements rpcapi.SnapshotRestore: it checks the
// archive (checksums, version, and that the state restores into a
// scratch state store), then has raft install it on every server, and
// starts the leader's duties again on the restored state. A bad archive
// changes nothing.
func (s *Server) SnapshotRestore(ctx context.Context, req *structs.SnapshotRestoreRequest) (*structs.GenericResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	meta, state, err := snapshot.Read(bytes.NewReader(req.Archive))
	if err != nil {
		return nil, structs.Invalid("%v", err)
	}
	scratch, err := newFSM(s.logger, nil)
	if err != nil {
		return nil, err
	}
	if err := scratch.Restore(io.NopCloser(bytes.NewReader(state))); err != nil {
		return nil, structs.Invalid("the archive's state does not restore, nothing was changed: %v", err)
	}
	rmeta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: meta.Index, Term: meta.Term, Size: int64(len(state))}
	if err := s.raft.Restore(rmeta, bytes.NewReader(state), raftApplyTimeout); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return nil, structs.NewError(structs.KindUnavailable, "restore the snapshot: %v", err)
		}
		return nil, fmt.Errorf("restore the snapshot: %w", err)
	}
	s.logger.Warn("restored the cluster state from a snapshot", "snapshot_id", meta.ID, "snapshot_index", meta.Index,
		"snapshot_cluster_id", meta.ClusterID)
	select {
	case s.reestablish <- struct{}{}:
	default:
	}
	return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: s.raft.LastIndex()}}, nil
}
