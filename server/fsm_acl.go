package server

import (
	"fmt"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

var aclMessageNames = map[MessageType]string{
	ACLBootstrapRequestType:    "acl-bootstrap",
	ACLPolicyUpsertRequestType: "acl-policy-upsert",
	ACLPolicyDeleteRequestType: "acl-policy-delete",
	ACLTokenUpsertRequestType:  "acl-token-upsert",
	ACLTokenDeleteRequestType:  "acl-token-delete",
	ACLRoleUpsertRequestType:   "acl-role-upsert",
	ACLRoleDeleteRequestType:   "acl-role-delete",
	ACLServerSecretRequestType: "acl-server-secret",
}

// ACLBootstrapCommand creates the first management token: the FSM refuses
// it when the ACLs were bootstrapped already, unless ResetIndex is the
// index of that bootstrap.
type ACLBootstrapCommand struct {
	Token      *structs.ACLToken
	ResetIndex uint64
}

// ACLPolicyUpsertCommand creates or updates policies.
type ACLPolicyUpsertCommand struct {
	Policies []*structs.ACLPolicy
}

// ACLPolicyDeleteCommand deletes policies; none when one does not exist.
type ACLPolicyDeleteCommand struct {
	Names []string
}

// ACLTokenUpsertCommand creates or updates tokens.
type ACLTokenUpsertCommand struct {
	Tokens []*structs.ACLToken
}

// ACLTokenDeleteCommand deletes tokens by accessor ID; none when one does
// not exist.
type ACLTokenDeleteCommand struct {
	AccessorIDs []string
}

// ACLRoleUpsertCommand creates or updates roles.
type ACLRoleUpsertCommand struct {
	Roles []*structs.ACLRole
}

// ACLRoleDeleteCommand deletes roles by ID; none when one does not exist.
type ACLRoleDeleteCommand struct {
	IDs []string
}

// ACLServerSecretCommand sets the servers' shared secret, once: a later
// one is ignored, so that every server keeps the first.
type ACLServerSecretCommand struct {
	Secret string
}

// applyACL applies the ACL commands.
func (f *FSM) applyACL(t MessageType, body []byte, index uint64, batch func(func(w *state.WriteTxn) error) error) error {
	decode := func(v any) error {
		if err := decodeBody(f.handle, body, v); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return nil
	}
	switch t {
	case ACLBootstrapRequestType:
		var cmd ACLBootstrapCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			st, err := w.ACLState()
			if err != nil {
				return err
			}
			if st.BootstrapIndex != 0 && st.BootstrapIndex != cmd.ResetIndex {
				return structs.Invalid("ACL bootstrap already done (reset index: %d)", st.BootstrapIndex)
			}
			st.BootstrapIndex = index
			if err := w.SetACLState(st); err != nil {
				return err
			}
			return w.UpsertACLToken(cmd.Token)
		})
	case ACLPolicyUpsertRequestType:
		var cmd ACLPolicyUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, p := range cmd.Policies {
				if err := w.UpsertACLPolicy(p); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLPolicyDeleteRequestType:
		var cmd ACLPolicyDeleteCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, n := range cmd.Names {
				if err := w.DeleteACLPolicy(n); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLTokenUpsertRequestType:
		var cmd ACLTokenUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, tok := range cmd.Tokens {
				if err := w.UpsertACLToken(tok); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLTokenDeleteRequestType:
		var cmd ACLTokenDeleteCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, id := range cmd.AccessorIDs {
				if err := w.DeleteACLToken(id); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLRoleUpsertRequestType:
		var cmd ACLRoleUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, r := range cmd.Roles {
				if err := w.UpsertACLRole(r); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLRoleDeleteRequestType:
		var cmd ACLRoleDeleteCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, id := range cmd.IDs {
				if err := w.DeleteACLRole(id); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLServerSecretRequestType:
		var cmd ACLServerSecretCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			st, err := w.ACLState()
			if err != nil || st.ServerSecret != "" {
				return err
			}
			st.ServerSecret = cmd.Secret
			return w.SetACLState(st)
		})
	}
	return fmt.Errorf("not an ACL command: %s", t)
}

// aclSnapshot is the ACL part of an FSM snapshot.
type aclSnapshot struct {
	State    *structs.ACLState
	Policies []*structs.ACLPolicy
	Tokens   []*structs.ACLToken
	Roles    []*structs.ACLRole
	// Added with logins; absent from older snapshots.
	Auth *aclAuthSnapshot
}

func snapshotACL(s *state.StateSnapshot) (*aclSnapshot, error) {
	var (
		out aclSnapshot
		err error
	)
	if out.State, err = s.ACLState(nil); err != nil {
		return nil, err
	}
	if out.Policies, err = s.ACLPolicies(nil, ""); err != nil {
		return nil, err
	}
	if out.Tokens, err = s.ACLTokens(nil, ""); err != nil {
		return nil, err
	}
	if out.Roles, err = s.ACLRoles(nil, ""); err != nil {
		return nil, err
	}
	if out.Auth, err = snapshotACLAuth(s); err != nil {
		return nil, err
	}
	return &out, nil
}

func restoreACL(r *state.Restorer, snap *aclSnapshot) error {
	if snap == nil {
		return nil
	}
	if snap.State != nil && (snap.State.BootstrapIndex != 0 || snap.State.ServerSecret != "") {
		if err := r.ACLState(snap.State); err != nil {
			return err
		}
	}
	for _, p := range snap.Policies {
		if err := r.ACLPolicy(p); err != nil {
			return err
		}
	}
	for _, t := range snap.Tokens {
		if err := r.ACLToken(t); err != nil {
			return err
		}
	}
	for _, ro := range snap.Roles {
		if err := r.ACLRole(ro); err != nil {
			return err
		}
	}
	return restoreACLAuth(r, snap.Auth)
}
