package server

import (
	"fmt"
	"time"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// aclAuthMessageNames name the login commands in logs.
var aclAuthMessageNames = map[MessageType]string{
	ACLAuthMethodUpsertRequestType:  "acl-auth-method-upsert",
	ACLAuthMethodDeleteRequestType:  "acl-auth-method-delete",
	ACLBindingRuleUpsertRequestType: "acl-binding-rule-upsert",
	ACLBindingRuleDeleteRequestType: "acl-binding-rule-delete",
	OneTimeTokenUpsertRequestType:   "acl-one-time-token-upsert",
	OneTimeTokenExchangeRequestType: "acl-one-time-token-exchange",
}

// ACLAuthMethodUpsertCommand creates or updates auth methods.
type ACLAuthMethodUpsertCommand struct {
	AuthMethods []*structs.ACLAuthMethod
}

// ACLAuthMethodDeleteCommand deletes auth methods and their binding
// rules; none when one does not exist.
type ACLAuthMethodDeleteCommand struct {
	Names []string
}

// ACLBindingRuleUpsertCommand creates or updates binding rules.
type ACLBindingRuleUpsertCommand struct {
	BindingRules []*structs.ACLBindingRule
}

// ACLBindingRuleDeleteCommand deletes binding rules; none when one does
// not exist.
type ACLBindingRuleDeleteCommand struct {
	IDs []string
}

// OneTimeTokenUpsertCommand stores a one-time token, and drops those
// expired at Now (or whose token is gone).
type OneTimeTokenUpsertCommand struct {
	Token *structs.OneTimeToken
	Now   time.Time
}

// OneTimeTokenExchangeCommand removes a one-time token: refused when it
// is gone or expired at Now, so that it is exchanged once.
type OneTimeTokenExchangeCommand struct {
	OneTimeSecretID string
	Now             time.Time
}

// applyACLAuth applies the login commands.
func (f *FSM) applyACLAuth(t MessageType, body []byte, batch func(func(w *state.WriteTxn) error) error) error {
	decode := func(v any) error {
		if err := decodeBody(f.handle, body, v); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return nil
	}
	switch t {
	case ACLAuthMethodUpsertRequestType:
		var cmd ACLAuthMethodUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, m := range cmd.AuthMethods {
				if err := w.UpsertACLAuthMethod(m); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLAuthMethodDeleteRequestType:
		var cmd ACLAuthMethodDeleteCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, n := range cmd.Names {
				if err := w.DeleteACLAuthMethod(n); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLBindingRuleUpsertRequestType:
		var cmd ACLBindingRuleUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, r := range cmd.BindingRules {
				if err := w.UpsertACLBindingRule(r); err != nil {
					return err
				}
			}
			return nil
		})
	case ACLBindingRuleDeleteRequestType:
		var cmd ACLBindingRuleDeleteCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			for _, id := range cmd.IDs {
				if err := w.DeleteACLBindingRule(id); err != nil {
					return err
				}
			}
			return nil
		})
	case OneTimeTokenUpsertRequestType:
		var cmd OneTimeTokenUpsertCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			if err := w.DeleteExpiredOneTimeTokens(cmd.Now); err != nil {
				return err
			}
			return w.UpsertOneTimeToken(cmd.Token)
		})
	case OneTimeTokenExchangeRequestType:
		var cmd OneTimeTokenExchangeCommand
		if err := decode(&cmd); err != nil {
			return err
		}
		return batch(func(w *state.WriteTxn) error {
			_, err := w.ExchangeOneTimeToken(cmd.OneTimeSecretID, cmd.Now)
			return err
		})
	}
	return fmt.Errorf("not an ACL login command: %s", t)
}

// aclAuthSnapshot is the login part of an FSM snapshot.
type aclAuthSnapshot struct {
	AuthMethods   []*structs.ACLAuthMethod
	BindingRules  []*structs.ACLBindingRule
	OneTimeTokens []*structs.OneTimeToken
}

func snapshotACLAuth(s *state.StateSnapshot) (*aclAuthSnapshot, error) {
	var (
		out aclAuthSnapshot
		err error
	)
	if out.AuthMethods, err = s.ACLAuthMethods(nil, ""); err != nil {
		return nil, err
	}
	if out.BindingRules, err = s.ACLBindingRules(nil, ""); err != nil {
		return nil, err
	}
	if out.OneTimeTokens, err = s.OneTimeTokens(nil); err != nil {
		return nil, err
	}
	return &out, nil
}

func restoreACLAuth(r *state.Restorer, snap *aclAuthSnapshot) error {
	if snap == nil {
		return nil
	}
	for _, m := range snap.AuthMethods {
		if err := r.ACLAuthMethod(m); err != nil {
			return err
		}
	}
	for _, b := range snap.BindingRules {
		if err := r.ACLBindingRule(b); err != nil {
			return err
		}
	}
	for _, t := range snap.OneTimeTokens {
		if err := r.OneTimeToken(t); err != nil {
			return err
		}
	}
	return nil
}
