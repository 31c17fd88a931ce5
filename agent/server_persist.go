package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/server/raftbolt"
	"github.com/drover-io/drover/structs"
)

// Persistent server storage under <data_dir>/server.
const (
	serverDirName     = "server"
	raftDirName       = "raft"
	raftDBName        = "raft.db"
	nodeIDFileName    = "node-id"
	snapshotsRetained = 2
)

// raftStores is a persistent server's raft storage: the bbolt log and
// stable store, the file snapshot store, the stable server ID and the
// transport.
//
// The transport is raft's in-memory one, addressed by the stable ID: a
// single server needs no network between raft peers, and its address in
// the raft configuration never changes across restarts. Multi-server
// clusters, which need a network transport, come in a later version.
type raftStores struct {
	id    string
	store *raftbolt.Store
	snaps raft.SnapshotStore
	trans *raft.InmemTransport
}

// openRaftStores opens (creating them on first start) the raft storage
// under dataDir.
func openRaftStores(dataDir string, logger *slog.Logger) (*raftStores, error) {
	dir := filepath.Join(dataDir, serverDirName, raftDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft directory: %w", err)
	}
	id, err := loadOrCreateNodeID(filepath.Join(dataDir, serverDirName, nodeIDFileName))
	if err != nil {
		return nil, err
	}
	store, err := raftbolt.Open(filepath.Join(dir, raftDBName))
	if err != nil {
		return nil, err
	}
	snapLog := slog.NewLogLogger(logger.With("component", "raft-snapshots").Handler(), slog.LevelInfo)
	snaps, err := raft.NewFileSnapshotStore(dir, snapshotsRetained, snapLog.Writer())
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("open raft snapshots in %s: %w", dir, err)
	}
	_, trans := raft.NewInmemTransport(raft.ServerAddress(id))
	return &raftStores{id: id, store: store, snaps: snaps, trans: trans}, nil
}

// apply puts the stores into a server configuration, with raft timeouts
// for a single server; snapshots are taken at raft's default interval
// and threshold.
func (r *raftStores) apply(cfg *server.Config) {
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = 250 * time.Millisecond
	cfg.RaftID = r.id
	cfg.LogStore = r.store
	cfg.StableStore = r.store
	cfg.SnapshotStore = r.snaps
	cfg.Transport = r.trans
	cfg.RaftConfig = rc
}

// close releases the transport and the log store (after the server shut
// raft down).
func (r *raftStores) close() error {
	_ = r.trans.Close()
	return r.store.Close()
}

// loadOrCreateNodeID reads the server's ID from path, creating it on
// first start.
func loadOrCreateNodeID(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if id == "" {
			return "", fmt.Errorf("server ID file %s is empty: restore it, or remove it only if %s holds no raft state", path, filepath.Dir(path))
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read server ID: %w", err)
	}
	id := structs.GenerateUUID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write server ID: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write server ID: %w", err)
	}
	return id, nil
}
