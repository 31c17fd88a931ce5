package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/structs"
)

// serfKeyringFile is where serf keeps the gossip keyring (beside its
// snapshot), so that keys installed at run time survive a restart; "" in
// -dev (no data dir).
func serfKeyringFile(cc *ClusterConfig) string {
	if cc.SerfSnapshot == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(cc.SerfSnapshot), "serf.keyring")
}

// loadGossipKeyring returns the keyring of the keyring file (primary key
// first) when there is one, else of the configured key (nil: no
// encryption). The file wins: it holds what `operator gossip keyring`
// changed since the key was configured.
func loadGossipKeyring(path string, configured []byte) (*memberlist.Keyring, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read the gossip keyring %s: %w", path, err)
		default:
			var encoded []string
			if err := json.Unmarshal(b, &encoded); err != nil || len(encoded) == 0 {
				return nil, fmt.Errorf("the gossip keyring %s is not a JSON list of base64 keys (%v): fix or delete it (server.encrypt is used then)", path, err)
			}
			keys := make([][]byte, 0, len(encoded))
			for i, e := range encoded {
				k, err := base64.StdEncoding.DecodeString(e)
				if err != nil {
					return nil, fmt.Errorf("the gossip keyring %s: key %d is not base64: %w", path, i, err)
				}
				keys = append(keys, k)
			}
			return memberlist.NewKeyring(keys, keys[0])
		}
	}
	if len(configured) == 0 {
		return nil, nil
	}
	return memberlist.NewKeyring(nil, configured)
}

// errNoGossip answers keyring calls of a server without a gossip pool.
var errNoGossip = structs.Invalid("this server has no gossip pool (a single server without clustering): it has no gossip keyring")

// GossipKeyringList lists the gossip encryption keys the pool's members
// hold.
func (s *Server) GossipKeyringList(ctx context.Context, _ *structs.GossipKeyringListRequest) (*structs.GossipKeyringResponse, error) {
	if s.cluster == nil || s.cluster.serf == nil {
		return nil, errNoGossip
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.cluster.localMu.Lock() // cluster.go
	resp, err := s.cluster.serf.KeyManager().ListKeys()
	s.cluster.localMu.Unlock()
	return keyringResponse(resp, err)
}

// GossipKeyringOp installs, uses or removes a gossip encryption key on
// every member of the pool.
func (s *Server) GossipKeyringOp(ctx context.Context, req *structs.GossipKeyringRequest) (*structs.GossipKeyringResponse, error) {
	if s.cluster == nil || s.cluster.serf == nil {
		return nil, errNoGossip
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k, err := base64.StdEncoding.DecodeString(req.Key)
	if err != nil || (len(k) != 16 && len(k) != 24 && len(k) != 32) {
		return nil, structs.Invalid("invalid gossip key: it must be base64 of 16, 24 or 32 bytes (make one with `drover operator gossip keyring generate`)")
	}
	km := s.cluster.serf.KeyManager()
	var resp *serf.KeyResponse
	s.cluster.localMu.Lock() // cluster.go
	defer s.cluster.localMu.Unlock()
	switch req.Op {
	case structs.GossipKeyringInstall:
		resp, err = km.InstallKey(req.Key)
	case structs.GossipKeyringUse:
		resp, err = km.UseKey(req.Key)
	case structs.GossipKeyringRemove:
		resp, err = km.RemoveKey(req.Key)
	default:
		return nil, structs.Invalid("unknown gossip keyring operation %q: use install, use or remove", req.Op)
	}
	s.logger.Info("gossip keyring changed", "op", req.Op, "error", err)
	return keyringResponse(resp, err)
}

// keyringResponse converts serf's answer: an error names the members that
// failed and why.
func keyringResponse(r *serf.KeyResponse, err error) (*structs.GossipKeyringResponse, error) {
	if r == nil {
		if err == nil {
			err = errors.New("no answer")
		}
		return nil, fmt.Errorf("gossip keyring: %w", err)
	}
	out := &structs.GossipKeyringResponse{Messages: r.Messages, Keys: r.Keys, PrimaryKeys: r.PrimaryKeys, NumNodes: r.NumNodes, NumErr: r.NumErr}
	if err != nil {
		msg := err.Error()
		for node, m := range r.Messages {
			msg += fmt.Sprintf("; %s: %s", node, m)
		}
		return nil, structs.Invalid("gossip keyring: %s", msg)
	}
	return out, nil
}
