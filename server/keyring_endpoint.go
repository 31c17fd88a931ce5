package server

import (
	"context"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// rekeyBatch is how many variables one raft entry of a full rotation
// encrypts again.
const rekeyBatch = 128

// KeyringList lists the root keys' metadata, oldest first.
func (s *Server) KeyringList(ctx context.Context, req *structs.KeyringListRequest) (*structs.KeyringListResponse, error) {
	resp := &structs.KeyringListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		keys, err := st.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		resp.Keys = make([]*structs.RootKeyMeta, 0, len(keys))
		for _, k := range keys {
			resp.Keys = append(resp.Keys, k.Meta())
		}
		return st.Index(state.TableRootKeys), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// KeyringPublicKeys lists the public keys that verify workload identities,
// one per root key, oldest first.
func (s *Server) KeyringPublicKeys(ctx context.Context, req *structs.KeyringPublicKeysRequest) (*structs.KeyringPublicKeysResponse, error) {
	resp := &structs.KeyringPublicKeysResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		keys, err := st.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		resp.PublicKeys = make([]*structs.KeyringPublicKey, 0, len(keys))
		for _, k := range keys {
			pub, err := s.keyring.PublicKey(k)
			if err != nil {
				return 0, err
			}
			resp.PublicKeys = append(resp.PublicKeys, &structs.KeyringPublicKey{KeyID: k.KeyID, PublicKey: pub, CreateTime: k.CreateTime})
		}
		return st.Index(state.TableRootKeys), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// KeyringRotate makes a new active root key; the former one stays to
// decrypt what it encrypted. With Full, every variable is then encrypted
// again with the new key, a batch per raft entry.
func (s *Server) KeyringRotate(ctx context.Context, req *structs.KeyringRotateRequest) (*structs.KeyringRotateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Algorithm != "" && req.Algorithm != structs.AlgorithmAES256GCM {
		return nil, structs.Invalid("algorithm %q is not supported: use %q", req.Algorithm, structs.AlgorithmAES256GCM)
	}
	if r, ok, err := replayed(s, req.RequestID, completeKeyringRotate); ok || err != nil {
		return r, err
	}
	prev, err := s.fsm.State().ActiveRootKey(nil)
	if err != nil {
		return nil, err
	}
	if err := s.checkOwnKEK(); err != nil {
		return nil, err
	}
	key, err := s.keyring.NewRootKey(s.clock.Now())
	if err != nil {
		return nil, err
	}
	cmd := &RootKeyAddCommand{Key: key}
	if prev != nil {
		cmd.PrevActive = prev.KeyID
	}
	r, err := applyWrite(s, req.RequestID, RootKeyAddRequestType, cmd, &structs.KeyringRotateResponse{Key: key.Meta()}, completeKeyringRotate)
	if err != nil {
		return nil, err
	}
	if r.Key == nil {
		return nil, structs.NewError(structs.KindConflict, "another rotation of the keyring happened at the same time: list the keys, and rotate again if you still need to")
	}
	if req.Full {
		n, err := s.rekeyVariables(ctx, r.Key.KeyID)
		r.Rekeyed = n
		if err != nil {
			return nil, fmt.Errorf("new root key %s is active, but encrypting the variables again stopped after %d: %w (rotate again with -full to finish)", r.Key.KeyID, n, err)
		}
	}
	return r, nil
}

// completeKeyringRotate sets the rotation's index, and drops the new key
// when the rotation lost the race with another one. The key's own indexes
// stay 0, as in Nomad's answer: a client that blocks on the keyring with
// the key's CreateIndex (Nomad's API suite does) gets the list at once;
// the keys listed carry the write's index.
func completeKeyringRotate(r *structs.KeyringRotateResponse, index uint64, result any) {
	r.Index = index
	if result != true {
		r.Key = nil
	}
}

// rekeyVariables encrypts every variable that another key encrypted with
// root key keyID, and returns how many it wrote.
func (s *Server) rekeyVariables(ctx context.Context, keyID string) (int, error) {
	st := s.fsm.State()
	key, err := st.RootKeyByID(nil, keyID)
	if err != nil {
		return 0, err
	}
	if key == nil {
		return 0, structs.NotFound("root key", keyID)
	}
	vars, err := st.Variables(nil, "*", "")
	if err != nil {
		return 0, err
	}
	done := 0
	var batch []*structs.VariableEncrypted
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, out, err := s.raftApply(VarRekeyRequestType, &VarRekeyCommand{Vars: batch})
		if err != nil {
			return err
		}
		n, _ := out.(int)
		done += n
		batch = nil
		return nil
	}
	for _, v := range vars {
		if v.KeyID == keyID {
			continue
		}
		if err := ctx.Err(); err != nil {
			return done, err
		}
		plain, err := s.decryptVariable(st, v)
		if err != nil {
			return done, err
		}
		items, err := structs.EncodeVariableItems(plain.Items)
		if err != nil {
			return done, err
		}
		sealed, err := s.keyring.Seal(key, items, structs.VariableAdditionalData(v.Namespace, v.Path))
		if err != nil {
			return done, err
		}
		c := v.Copy()
		c.KeyID, c.Data = keyID, sealed
		batch = append(batch, c)
		if len(batch) == rekeyBatch {
			if err := flush(); err != nil {
				return done, err
			}
		}
	}
	return done, flush()
}

// KeyringDelete removes an inactive root key; one that variables are
// still encrypted with only with Force, which makes them unreadable.
func (s *Server) KeyringDelete(ctx context.Context, req *structs.KeyringDeleteRequest) (*structs.KeyringDeleteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	complete := func(r *structs.KeyringDeleteResponse, index uint64, _ any) { r.Index = index }
	if r, ok, err := replayed(s, req.RequestID, complete); ok || err != nil {
		return r, err
	}
	st := s.fsm.State()
	key, err := st.RootKeyByID(nil, req.KeyID)
	if err != nil {
		return nil, err
	}
	switch {
	case key == nil:
		return nil, structs.NotFound("root key", req.KeyID)
	case key.State == structs.RootKeyStateActive:
		return nil, structs.Invalid("root key %s is the active key: rotate the keyring first, then remove it", req.KeyID)
	}
	if !req.Force {
		vars, err := st.VariablesByKeyID(nil, req.KeyID)
		if err != nil {
			return nil, err
		}
		if len(vars) > 0 {
			return nil, inUseError(req.KeyID, len(vars))
		}
	}
	index, out, err := s.raftApply(RootKeyDeleteRequestType, &RootKeyDeleteCommand{KeyID: req.KeyID, Force: req.Force})
	if err != nil {
		return nil, err
	}
	if n, _ := out.(int); n > 0 {
		return nil, inUseError(req.KeyID, n)
	}
	s.keyring.Forget(req.KeyID)
	return &structs.KeyringDeleteResponse{WriteMeta: structs.WriteMeta{Index: index}}, nil
}

func inUseError(keyID string, n int) error {
	return structs.Invalid("%d variables are encrypted with root key %s: rotate the keyring with -full to encrypt them with the active key, "+
		"or force the removal (they become unreadable)", n, keyID)
}

// activeRootKey returns the active root key, making the first one when
// there is none yet (the leader makes it when it takes office; this
// covers a cluster whose leader could not).
func (s *Server) activeRootKey() (*structs.RootKey, error) {
	key, err := s.fsm.State().ActiveRootKey(nil)
	if err != nil || key != nil {
		return key, err
	}
	if err := s.bootstrapRootKey(); err != nil {
		return nil, err
	}
	key, err = s.fsm.State().ActiveRootKey(nil)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, structs.NewError(structs.KindUnavailable, "the keyring has no active root key: try again")
	}
	return key, nil
}

// bootstrapRootKey commits the first root key when the keyring has none.
// Two servers (or requests) racing both propose one; only the first
// commits (RootKeyAddCommand's check on the active key).
func (s *Server) bootstrapRootKey() error {
	if key, err := s.fsm.State().ActiveRootKey(nil); err != nil || key != nil {
		return err
	}
	key, err := s.keyring.NewRootKey(s.clock.Now())
	if err != nil {
		return err
	}
	if _, _, err := s.raftApply(RootKeyAddRequestType, &RootKeyAddCommand{Key: key}); err != nil {
		return fmt.Errorf("make the first root key: %w", err)
	}
	return nil
}
