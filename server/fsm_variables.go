package server

import (
	"fmt"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The raft commands of variables and of the keyring. Variables travel
// and are stored encrypted (structs.VariableEncrypted), root keys wrapped
// (structs.RootKey): nothing in these commands is a secret in the clear.

// VarSetCommand stores a variable; with CheckIndex, only if the stored
// variable's ModifyIndex is *CheckIndex (0: only if there is none); when
// it is locked, only if LockID is its lock's. The FSM answers whether it
// was stored.
type VarSetCommand struct {
	Var        *structs.VariableEncrypted
	CheckIndex *uint64
	LockID     string
	// CheckNamespace refuses the variable when its namespace does not
	// exist. Entries written before namespaces existed lack it, and replay
	// as they applied then.
	CheckNamespace bool
}

// VarDeleteCommand deletes a variable; with CheckIndex, only if its
// ModifyIndex is *CheckIndex; when it is locked, only if LockID is its
// lock's. The FSM answers whether it is gone.
type VarDeleteCommand struct {
	Namespace  string
	Path       string
	CheckIndex *uint64
	LockID     string
}

// Variable lock operations (VarLockCommand.Op).
const (
	varLockAcquire = "acquire"
	varLockRelease = "release"
)

// VarLockCommand takes (Op acquire: Lock, its ID made by the proposer,
// and Var, the new content or nil to keep it) or releases (Op release,
// Lock.ID) a variable's lock. The FSM answers whether it did.
type VarLockCommand struct {
	Op        string
	Namespace string
	Path      string
	Lock      *structs.VariableLock
	Var       *structs.VariableEncrypted
	// CheckNamespace refuses to take the lock when the namespace does not
	// exist (as VarSetCommand's).
	CheckNamespace bool
}

// VarRekeyCommand replaces the ciphertext of variables encrypted again
// with the active key, those whose ModifyIndex is still the one given.
// The FSM answers how many it replaced.
type VarRekeyCommand struct {
	Vars []*structs.VariableEncrypted
}

// RootKeyAddCommand makes Key the active root key if the active one is
// still PrevActive ("" for none). The FSM answers whether it did.
type RootKeyAddCommand struct {
	Key        *structs.RootKey
	PrevActive string
}

// RootKeyDeleteCommand removes an inactive root key; without Force, not
// while variables are encrypted with it. The FSM answers how many are
// (0 when it removed the key).
type RootKeyDeleteCommand struct {
	KeyID string
	Force bool
}

// applyVariables applies one of the commands above; *resp is set inside
// the transaction, so that a deduplicated write records it.
func (f *FSM) applyVariables(t MessageType, body []byte, batch func(func(w *state.WriteTxn) error) error, resp *any) error {
	switch t {
	case VarSetRequestType:
		var cmd VarSetCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Var == nil {
			return fmt.Errorf("%s without a variable", t)
		}
		return batch(func(w *state.WriteTxn) error {
			if cmd.CheckNamespace {
				if err := w.CheckNamespace(cmd.Var.Namespace); err != nil {
					return err
				}
			}
			ok, err := w.SetVariable(cmd.Var, cmd.CheckIndex, cmd.LockID)
			*resp = ok
			return err
		})
	case VarDeleteRequestType:
		var cmd VarDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return batch(func(w *state.WriteTxn) error {
			ok, err := w.DeleteVariable(cmd.Namespace, cmd.Path, cmd.CheckIndex, cmd.LockID)
			*resp = ok
			return err
		})
	case VarLockRequestType:
		var cmd VarLockCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Lock == nil {
			return fmt.Errorf("%s without a lock", t)
		}
		return batch(func(w *state.WriteTxn) error {
			var ok bool
			var err error
			switch cmd.Op {
			case varLockAcquire:
				if cmd.CheckNamespace {
					if err := w.CheckNamespace(cmd.Namespace); err != nil {
						return err
					}
				}
				ok, err = w.AcquireVariableLock(cmd.Namespace, cmd.Path, cmd.Lock, cmd.Var)
			case varLockRelease:
				ok, err = w.ReleaseVariableLock(cmd.Namespace, cmd.Path, cmd.Lock.ID)
			default:
				err = fmt.Errorf("%s: unknown operation %q", t, cmd.Op)
			}
			*resp = ok
			return err
		})
	case VarRekeyRequestType:
		var cmd VarRekeyCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return batch(func(w *state.WriteTxn) error {
			n, err := w.RekeyVariables(cmd.Vars)
			*resp = n
			return err
		})
	case RootKeyAddRequestType:
		var cmd RootKeyAddCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Key == nil {
			return fmt.Errorf("%s without a key", t)
		}
		return batch(func(w *state.WriteTxn) error {
			ok, err := w.AddRootKey(cmd.Key, cmd.PrevActive)
			*resp = ok
			return err
		})
	case RootKeyDeleteRequestType:
		var cmd RootKeyDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return batch(func(w *state.WriteTxn) error {
			n, err := w.DeleteRootKey(cmd.KeyID, cmd.Force)
			*resp = n
			return err
		})
	}
	return fmt.Errorf("not a variables command: %s", t)
}

// restoreVariables restores the variables and root keys of a snapshot.
func restoreVariables(r *state.Restorer, data *snapshotData) error {
	for _, v := range data.Variables {
		if err := r.Variable(v); err != nil {
			return err
		}
	}
	for _, k := range data.RootKeys {
		if err := r.RootKey(k); err != nil {
			return err
		}
	}
	return nil
}

// snapshotVariables reads the variables and root keys of a snapshot.
func snapshotVariables(snap *state.StateSnapshot) ([]*structs.VariableEncrypted, []*structs.RootKey, error) {
	vars, err := snap.Variables(nil, "*", "")
	if err != nil {
		return nil, nil, err
	}
	keys, err := snap.RootKeys(nil)
	if err != nil {
		return nil, nil, err
	}
	return vars, keys, nil
}
