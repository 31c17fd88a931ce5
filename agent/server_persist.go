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
// stable store, the file snapshot store and the stable server ID. Raft's
// transport is the server's own (TCP on the RPC port), and raft names
// servers by their stable IDs, so that a server that comes back on another
// address is still itself.
type raftStores struct {
	id    string
	dir   string // <data_dir>/server
	store *raftbolt.Store
	snaps raft.SnapshotStore
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
	return &raftStores{id: id, dir: filepath.Join(dataDir, serverDirName), store: store, snaps: snaps}, nil
}

// apply puts the stores into a server configuration, with raft's timeouts
// times multiplier (0 is 1): a server that bootstraps alone and joins no
// one elects itself faster (half of them), as it waits for no peer.
// Snapshots are taken at raft's default interval and threshold.
func (r *raftStores) apply(cfg *server.Config, multiplier int, alone bool) {
	rc := raft.DefaultConfig()
	if alone {
		rc.HeartbeatTimeout /= 2
		rc.ElectionTimeout /= 2
		rc.LeaderLeaseTimeout /= 2
	}
	m := time.Duration(max(multiplier, 1))
	rc.HeartbeatTimeout *= m
	rc.ElectionTimeout *= m
	rc.LeaderLeaseTimeout *= m
	cfg.RaftID = r.id
	cfg.LogStore = r.store
	cfg.StableStore = r.store
	cfg.SnapshotStore = r.snaps
	cfg.RaftConfig = rc
}

// serfSnapshot and clusterIDFile are where the server keeps the members it
// saw and the ID of its cluster.
func (r *raftStores) serfSnapshot() string  { return filepath.Join(r.dir, "serf", "local.snapshot") }
func (r *raftStores) clusterIDFile() string { return filepath.Join(r.dir, "cluster-id") }

// close releases the log store (after the server shut raft down).
func (r *raftStores) close() error {
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
