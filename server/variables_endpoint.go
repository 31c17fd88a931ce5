package server

import (
	"context"
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// Variables are encrypted here, by the server that serves the request,
// with the active root key, before they are proposed to raft; they are
// decrypted here when read. The raft log, the state store and snapshots
// hold ciphertext only, and a deduplicated write's record (its reply
// template) holds no items.

// VarList lists the metadata of the variables of a namespace ("*": all)
// whose path starts with the request's prefix, in path order, a page at a
// time when PerPage is set.
func (s *Server) VarList(ctx context.Context, req *structs.VariablesListRequest) (*structs.VariablesListResponse, error) {
	if req.PerPage < 0 {
		return nil, structs.Invalid("per_page %d is invalid: use a positive number, or none for all", req.PerPage)
	}
	ns := namespaceOf(&req.QueryOptions)
	resp := &structs.VariablesListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		vars, err := st.Variables(ws, ns, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Data, resp.NextToken = pageVariables(vars, req.NextToken, req.PerPage)
		return st.Index(state.TableVariables), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// pageVariables returns the metadata of the page of vars (ordered by
// namespace and path) that starts at token, at most perPage long (0: to
// the end), and the token of the next page ("" when this is the last).
func pageVariables(vars []*structs.VariableEncrypted, token string, perPage int) ([]*structs.VariableMetadata, string) {
	tokNS, tokPath, _ := strings.Cut(token, ".")
	out := make([]*structs.VariableMetadata, 0, len(vars))
	for _, v := range vars {
		if token != "" && (v.Namespace < tokNS || v.Namespace == tokNS && v.Path < tokPath) {
			continue
		}
		if perPage > 0 && len(out) == perPage {
			return out, variableToken(v)
		}
		out = append(out, v.Metadata())
	}
	return out, ""
}

// variableToken is a variable's pagination token: its namespace and path
// joined by ".", which neither may hold.
func variableToken(v *structs.VariableEncrypted) string { return v.Namespace + "." + v.Path }

// VarGet reads one variable, decrypted; Data is nil when there is none
// (the HTTP API's 404). As a blocking query it returns when the variable
// changes (or appears, or goes).
func (s *Server) VarGet(ctx context.Context, req *structs.VariablesReadRequest) (*structs.VariablesReadResponse, error) {
	ns := namespaceOf(&req.QueryOptions)
	if ns == "*" {
		return nil, structs.Invalid("reading a variable needs one namespace, not \"*\"")
	}
	if err := structs.ValidateVariablePath(req.Path); err != nil {
		return nil, err
	}
	resp := &structs.VariablesReadResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		resp.Data = nil
		v, err := st.VariableByPath(ws, ns, req.Path)
		if err != nil {
			return 0, err
		}
		if v == nil {
			return st.Index(state.TableVariables), nil
		}
		resp.Data, err = s.decryptVariable(st, v)
		if err != nil {
			return 0, err
		}
		return v.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// VarApply writes or deletes a variable (Op), with or without a
// check-and-set index. A CAS that does not apply answers Conflicted with
// the variable as it is; nothing is written then.
func (s *Server) VarApply(ctx context.Context, req *structs.VariablesApplyRequest) (*structs.VariablesApplyResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.Var == nil {
		return nil, structs.Invalid("missing variable")
	}
	in := req.Var.Copy()
	if in.Namespace == "" {
		in.Namespace = structs.DefaultNamespace
	}
	if err := structs.ValidateNamespaceName(in.Namespace); err != nil {
		return nil, err
	}
	if err := structs.ValidateVariablePath(in.Path); err != nil {
		return nil, err
	}
	if writesVariable(req.Op) {
		if err := s.checkNamespaceExists(in.Namespace); err != nil {
			return nil, err
		}
	}
	var check *uint64
	switch req.Op {
	case structs.VarOpSet, structs.VarOpDelete:
	case structs.VarOpCAS, structs.VarOpDeleteCAS:
		c := req.CheckIndex
		check = &c
	case structs.VarOpLockAcquire, structs.VarOpLockRenew, structs.VarOpLockRelease:
		return s.varLockOp(req, in)
	default:
		return nil, structs.Invalid("variable operation %q is unknown: use %q, %q, %q, %q or a lock operation", req.Op,
			structs.VarOpSet, structs.VarOpCAS, structs.VarOpDelete, structs.VarOpDeleteCAS)
	}
	lockID := ""
	if in.Lock != nil {
		lockID = in.Lock.ID
	}
	complete := func(r *structs.VariablesApplyResponse, index uint64, result any) {
		r.Index = index
		r.Conflicted = result != true
	}
	if r, ok, err := replayed(s, req.RequestID, complete); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return s.finishVarApply(r, in)
	}
	// The reply template is recorded in the replicated state with a
	// deduplicated write: it carries no items.
	reply := &structs.VariablesApplyResponse{Op: req.Op}
	var (
		r   *structs.VariablesApplyResponse
		err error
	)
	if req.Op == structs.VarOpDelete || req.Op == structs.VarOpDeleteCAS {
		r, err = applyWrite(s, req.RequestID, VarDeleteRequestType,
			&VarDeleteCommand{Namespace: in.Namespace, Path: in.Path, CheckIndex: check, LockID: lockID}, reply, complete)
	} else {
		var cmd *VarSetCommand
		cmd, err = s.sealVariable(in, check)
		if err != nil {
			return nil, err
		}
		cmd.LockID = lockID
		cmd.CheckNamespace = true
		r, err = applyWrite(s, req.RequestID, VarSetRequestType, cmd, reply, complete)
	}
	if err != nil {
		return nil, err
	}
	return s.finishVarApply(r, in)
}

// writesVariable reports whether op may create a variable: those need
// its namespace to exist (deleting or releasing what is not there needs
// nothing).
func writesVariable(op string) bool {
	switch op {
	case structs.VarOpSet, structs.VarOpCAS, structs.VarOpLockAcquire:
		return true
	}
	return false
}

// varLockOp takes, renews or releases a variable's lock. Taking it
// writes the variable (with in's items when there are some, else keeping
// its content: a variable that does not exist is made with no items) and
// answers it with its lock, whose ID the holder gives to renew, write and
// release; renewing writes nothing. A lock held by another (or, to take
// it, one that expired less than its delay ago) is a conflict.
func (s *Server) varLockOp(req *structs.VariablesApplyRequest, in *structs.VariableDecrypted) (*structs.VariablesApplyResponse, error) {
	k := varKey{in.Namespace, in.Path}
	complete := func(r *structs.VariablesApplyResponse, index uint64, result any) {
		r.Index = index
		r.Conflicted = result != true
	}
	if r, ok, err := replayed(s, req.RequestID, complete); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return s.finishVarLock(r, in)
	}
	st := s.fsm.State()
	stored, err := st.VariableByPath(nil, in.Namespace, in.Path)
	if err != nil {
		return nil, err
	}
	switch req.Op {
	case structs.VarOpLockAcquire:
		ttl, delay, err := in.Lock.LockDurations()
		if err != nil {
			return nil, err
		}
		if until := s.varLocks.delayedUntil(k); !until.IsZero() {
			return s.finishVarLock(&structs.VariablesApplyResponse{Op: req.Op, Conflicted: true}, in)
		}
		lock := &structs.VariableLock{ID: structs.GenerateUUID(), TTL: ttl.String(), LockDelay: delay.String()}
		cmd := &VarLockCommand{Op: varLockAcquire, Namespace: in.Namespace, Path: in.Path, Lock: lock, CheckNamespace: true}
		if len(in.Items) > 0 || stored == nil {
			set, err := s.sealItems(in, len(in.Items) == 0)
			if err != nil {
				return nil, err
			}
			cmd.Var = set
		}
		// The template records the lock (its ID), never the items.
		reply := &structs.VariablesApplyResponse{Op: req.Op, Output: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Lock: lock}}}
		r, err := applyWrite(s, req.RequestID, VarLockRequestType, cmd, reply, complete)
		if err != nil {
			return nil, err
		}
		if !r.Conflicted {
			s.varLocks.hold(k, lock.ID, ttl, delay)
		}
		return s.finishVarLock(r, in)
	case structs.VarOpLockRenew:
		id := lockIDOf(in)
		r := &structs.VariablesApplyResponse{Op: req.Op}
		if stored == nil || stored.Lock == nil || stored.Lock.ID != id {
			r.Conflicted = true
			return s.finishVarLock(r, in)
		}
		ttl, delay, err := stored.Lock.LockDurations()
		if err != nil {
			ttl, delay = structs.DefaultVariableLockTTL, structs.DefaultVariableLockDelay
		}
		s.varLocks.hold(k, id, ttl, delay)
		r.Index = stored.ModifyIndex
		r.Output = &structs.VariableDecrypted{VariableMetadata: *stored.Metadata()}
		return r, nil
	default: // release
		id := lockIDOf(in)
		if id == "" {
			return nil, structs.Invalid("releasing a lock needs its ID: send the variable with Lock.ID as the lock was given")
		}
		cmd := &VarLockCommand{Op: varLockRelease, Namespace: in.Namespace, Path: in.Path, Lock: &structs.VariableLock{ID: id}}
		r, err := applyWrite(s, req.RequestID, VarLockRequestType, cmd, &structs.VariablesApplyResponse{Op: req.Op}, complete)
		if err != nil {
			return nil, err
		}
		if !r.Conflicted {
			s.varLocks.release(k, id)
		}
		return s.finishVarLock(r, in)
	}
}

func lockIDOf(in *structs.VariableDecrypted) string {
	if in.Lock == nil {
		return ""
	}
	return in.Lock.ID
}

// finishVarLock completes the reply of a lock operation: the conflict
// (the variable as it is), or the variable locked (with in's items, or
// its stored ones) or released (its metadata only).
func (s *Server) finishVarLock(r *structs.VariablesApplyResponse, in *structs.VariableDecrypted) (*structs.VariablesApplyResponse, error) {
	st := s.fsm.State()
	stored, err := st.VariableByPath(nil, in.Namespace, in.Path)
	if err != nil {
		return nil, err
	}
	if r.Conflicted {
		r.Output = nil
		r.Conflict = &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path}}
		if stored != nil {
			r.Conflict.VariableMetadata = *stored.Metadata()
		}
		return r, nil
	}
	out := &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path, ModifyIndex: r.Index}}
	if stored != nil && stored.ModifyIndex == r.Index {
		out.VariableMetadata = *stored.Metadata()
	} else if r.Output != nil && r.Output.Lock != nil {
		out.Lock = r.Output.Lock.Copy()
	}
	if r.Op == structs.VarOpLockAcquire {
		out.Items = in.Items
		if len(out.Items) == 0 && stored != nil && stored.ModifyIndex == r.Index {
			dec, err := s.decryptVariable(st, stored)
			if err != nil {
				return nil, err
			}
			out.Items = dec.Items
		}
	}
	r.Output = out
	return r, nil
}

// sealVariable encrypts in's items with the active root key (made first
// when there is none) into the command that stores them.
func (s *Server) sealVariable(in *structs.VariableDecrypted, check *uint64) (*VarSetCommand, error) {
	v, err := s.sealItems(in, false)
	if err != nil {
		return nil, err
	}
	return &VarSetCommand{Var: v, CheckIndex: check}, nil
}

// sealItems encrypts in's items (none allowed with allowEmpty: a lock
// taken on a variable that does not exist) with the active root key,
// made first when there is none.
func (s *Server) sealItems(in *structs.VariableDecrypted, allowEmpty bool) (*structs.VariableEncrypted, error) {
	plain := []byte("{}")
	if !allowEmpty || len(in.Items) > 0 {
		var err error
		if plain, err = structs.EncodeVariableItems(in.Items); err != nil {
			return nil, err
		}
	}
	key, err := s.activeRootKey()
	if err != nil {
		return nil, err
	}
	sealed, err := s.keyring.Seal(key, plain, structs.VariableAdditionalData(in.Namespace, in.Path))
	if err != nil {
		return nil, fmt.Errorf("encrypt variable %q: %w", in.Path, err)
	}
	now := s.clock.Now().UnixNano()
	return &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path, CreateTime: now, ModifyTime: now},
		KeyID:            key.KeyID,
		Data:             sealed,
	}, nil
}

// finishVarApply completes the reply of a committed change: the conflict,
// read from the state as it is now, or the variable written, its metadata
// from the state and its items as sent.
func (s *Server) finishVarApply(r *structs.VariablesApplyResponse, in *structs.VariableDecrypted) (*structs.VariablesApplyResponse, error) {
	st := s.fsm.State()
	stored, err := st.VariableByPath(nil, in.Namespace, in.Path)
	if err != nil {
		return nil, err
	}
	if r.Conflicted {
		r.Conflict = &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path}}
		if stored != nil {
			if r.Conflict, err = s.decryptVariable(st, stored); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	if r.Op == structs.VarOpDelete || r.Op == structs.VarOpDeleteCAS {
		return r, nil
	}
	out := &structs.VariableDecrypted{Items: in.Items}
	if stored != nil && stored.ModifyIndex == r.Index {
		out.VariableMetadata = *stored.Metadata()
	} else {
		// Written again since: report what this write stored.
		out.VariableMetadata = structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path, CreateIndex: r.Index, ModifyIndex: r.Index}
	}
	r.Output = out
	return r, nil
}

// decryptVariable opens a stored variable with its root key.
func (s *Server) decryptVariable(st *state.StateStore, v *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	key, err := st.RootKeyByID(nil, v.KeyID)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("variable %q in namespace %q is encrypted with root key %s, which was removed from the keyring: it cannot be read; write it again or delete it",
			v.Path, v.Namespace, v.KeyID)
	}
	plain, err := s.keyring.Open(key, v.Data, structs.VariableAdditionalData(v.Namespace, v.Path))
	if err != nil {
		return nil, fmt.Errorf("decrypt variable %q in namespace %q: %w", v.Path, v.Namespace, err)
	}
	items, err := structs.DecodeVariableItems(plain)
	if err != nil {
		return nil, fmt.Errorf("variable %q in namespace %q: %w", v.Path, v.Namespace, err)
	}
	return &structs.VariableDecrypted{VariableMetadata: *v.Metadata(), Items: items}, nil
}
