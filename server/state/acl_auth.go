package state

import (
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// The tables of logins: auth methods by name, binding rules by ID (and by
// auth method), and one-time tokens by their secret.
const (
	TableACLAuthMethods  = "acl_auth_method"
	TableACLBindingRules = "acl_binding_rule"
	TableOneTimeTokens   = "acl_one_time_token"
)

func aclAuthMethodsSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableACLAuthMethods, Indexes: map[string]*memdb.IndexSchema{
		"id": stringIndex("id", "Name", true, false),
	}}
}

func aclBindingRulesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableACLBindingRules, Indexes: map[string]*memdb.IndexSchema{
		"id":          stringIndex("id", "ID", true, false),
		"auth_method": stringIndex("auth_method", "AuthMethod", false, false),
	}}
}

func oneTimeTokensSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableOneTimeTokens, Indexes: map[string]*memdb.IndexSchema{
		"id":       stringIndex("id", "OneTimeSecretID", true, false),
		"accessor": stringIndex("accessor", "AccessorID", false, false),
	}}
}

// ACLAuthMethodByName returns an auth method, nil when there is none.
func (r *reader) ACLAuthMethodByName(ws memdb.WatchSet, name string) (*structs.ACLAuthMethod, error) {
	return first[*structs.ACLAuthMethod](r, ws, TableACLAuthMethods, "id", name)
}

// ACLAuthMethods returns the auth methods whose name starts with prefix.
func (r *reader) ACLAuthMethods(ws memdb.WatchSet, prefix string) ([]*structs.ACLAuthMethod, error) {
	return get[*structs.ACLAuthMethod](r, ws, TableACLAuthMethods, "id_prefix", prefix)
}

// ACLBindingRuleByID returns a binding rule, nil when there is none.
func (r *reader) ACLBindingRuleByID(ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	return first[*structs.ACLBindingRule](r, ws, TableACLBindingRules, "id", id)
}

// ACLBindingRules returns the binding rules whose ID starts with prefix.
func (r *reader) ACLBindingRules(ws memdb.WatchSet, prefix string) ([]*structs.ACLBindingRule, error) {
	return get[*structs.ACLBindingRule](r, ws, TableACLBindingRules, "id_prefix", prefix)
}

// ACLBindingRulesByAuthMethod returns the binding rules of an auth method.
func (r *reader) ACLBindingRulesByAuthMethod(ws memdb.WatchSet, method string) ([]*structs.ACLBindingRule, error) {
	return get[*structs.ACLBindingRule](r, ws, TableACLBindingRules, "auth_method", method)
}

// OneTimeTokenBySecret returns a one-time token, nil when there is none.
func (r *reader) OneTimeTokenBySecret(ws memdb.WatchSet, secret string) (*structs.OneTimeToken, error) {
	return first[*structs.OneTimeToken](r, ws, TableOneTimeTokens, "id", secret)
}

// OneTimeTokens returns every one-time token.
func (r *reader) OneTimeTokens(ws memdb.WatchSet) ([]*structs.OneTimeToken, error) {
	return get[*structs.OneTimeToken](r, ws, TableOneTimeTokens, "id")
}

// UpsertACLAuthMethod stores an auth method (owned by the store from now
// on), keeping the CreateIndex and CreateTime of the one it replaces; a
// Default one makes any other not default.
func (w *WriteTxn) UpsertACLAuthMethod(m *structs.ACLAuthMethod) error {
	raw, err := w.txn.First(TableACLAuthMethods, "id", m.Name)
	if err != nil {
		return fmt.Errorf("upsert ACL auth method %q: %w", m.Name, err)
	}
	m.CreateIndex = w.index
	if raw != nil {
		old := raw.(*structs.ACLAuthMethod)
		m.CreateIndex, m.CreateTime = old.CreateIndex, old.CreateTime
	}
	m.ModifyIndex = w.index
	if m.Default {
		it, err := w.txn.Get(TableACLAuthMethods, "id")
		if err != nil {
			return fmt.Errorf("upsert ACL auth method %q: %w", m.Name, err)
		}
		var others []*structs.ACLAuthMethod
		for o := it.Next(); o != nil; o = it.Next() {
			if om := o.(*structs.ACLAuthMethod); om.Default && om.Name != m.Name {
				others = append(others, om)
			}
		}
		for _, om := range others {
			c := om.Copy()
			c.Default, c.ModifyIndex = false, w.index
			if err := w.txn.Insert(TableACLAuthMethods, c); err != nil {
				return fmt.Errorf("upsert ACL auth method %q: %w", c.Name, err)
			}
		}
	}
	if err := w.txn.Insert(TableACLAuthMethods, m); err != nil {
		return fmt.Errorf("upsert ACL auth method %q: %w", m.Name, err)
	}
	w.markTable(TableACLAuthMethods)
	return nil
}

// DeleteACLAuthMethod removes an auth method and its binding rules; an
// unknown one is KindNotFound.
func (w *WriteTxn) DeleteACLAuthMethod(name string) error {
	raw, err := w.txn.First(TableACLAuthMethods, "id", name)
	if err != nil {
		return fmt.Errorf("delete ACL auth method %q: %w", name, err)
	}
	if raw == nil {
		return structs.NotFound("ACL auth method", name)
	}
	if err := w.txn.Delete(TableACLAuthMethods, raw); err != nil {
		return fmt.Errorf("delete ACL auth method %q: %w", name, err)
	}
	n, err := w.txn.DeleteAll(TableACLBindingRules, "auth_method", name)
	if err != nil {
		return fmt.Errorf("delete the binding rules of ACL auth method %q: %w", name, err)
	}
	if n > 0 {
		w.markTable(TableACLBindingRules)
	}
	w.markTable(TableACLAuthMethods)
	return nil
}

// UpsertACLBindingRule stores a binding rule (owned by the store from now
// on), keeping the CreateIndex and CreateTime of the one it replaces.
func (w *WriteTxn) UpsertACLBindingRule(r *structs.ACLBindingRule) error {
	raw, err := w.txn.First(TableACLBindingRules, "id", r.ID)
	if err != nil {
		return fmt.Errorf("upsert ACL binding rule %q: %w", r.ID, err)
	}
	r.CreateIndex = w.index
	if raw != nil {
		old := raw.(*structs.ACLBindingRule)
		r.CreateIndex, r.CreateTime = old.CreateIndex, old.CreateTime
	}
	r.ModifyIndex = w.index
	if err := w.txn.Insert(TableACLBindingRules, r); err != nil {
		return fmt.Errorf("upsert ACL binding rule %q: %w", r.ID, err)
	}
	w.markTable(TableACLBindingRules)
	return nil
}

// DeleteACLBindingRule removes a binding rule; an unknown one is
// KindNotFound.
func (w *WriteTxn) DeleteACLBindingRule(id string) error {
	raw, err := w.txn.First(TableACLBindingRules, "id", id)
	if err != nil {
		return fmt.Errorf("delete ACL binding rule %q: %w", id, err)
	}
	if raw == nil {
		return structs.NotFound("ACL binding rule", id)
	}
	if err := w.txn.Delete(TableACLBindingRules, raw); err != nil {
		return fmt.Errorf("delete ACL binding rule %q: %w", id, err)
	}
	w.markTable(TableACLBindingRules)
	return nil
}

// UpsertOneTimeToken stores a one-time token (owned by the store from
// now on).
func (w *WriteTxn) UpsertOneTimeToken(t *structs.OneTimeToken) error {
	t.CreateIndex, t.ModifyIndex = w.index, w.index
	if err := w.txn.Insert(TableOneTimeTokens, t); err != nil {
		return fmt.Errorf("store one-time token: %w", err)
	}
	w.markTable(TableOneTimeTokens)
	return nil
}

// ExchangeOneTimeToken removes a one-time token and returns the accessor
// ID of its token: an unknown one, or one expired at now, is
// KindPermission (and an expired one is removed all the same).
func (w *WriteTxn) ExchangeOneTimeToken(secret string, now time.Time) (string, error) {
	raw, err := w.txn.First(TableOneTimeTokens, "id", secret)
	if err != nil {
		return "", fmt.Errorf("read one-time token: %w", err)
	}
	if raw == nil {
		return "", structs.NewError(structs.KindPermission, "one-time token not found (used or expired)")
	}
	ott := raw.(*structs.OneTimeToken)
	if err := w.txn.Delete(TableOneTimeTokens, raw); err != nil {
		return "", fmt.Errorf("delete one-time token: %w", err)
	}
	w.markTable(TableOneTimeTokens)
	if !now.Before(ott.ExpiresAt) {
		return "", structs.NewError(structs.KindPermission, "one-time token expired")
	}
	return ott.AccessorID, nil
}

// DeleteExpiredOneTimeTokens removes the one-time tokens expired at now
// and those whose token is gone.
func (w *WriteTxn) DeleteExpiredOneTimeTokens(now time.Time) error {
	it, err := w.txn.Get(TableOneTimeTokens, "id")
	if err != nil {
		return fmt.Errorf("list one-time tokens: %w", err)
	}
	var gone []any
	for raw := it.Next(); raw != nil; raw = it.Next() {
		ott := raw.(*structs.OneTimeToken)
		tok, err := w.txn.First(TableACLTokens, "id", ott.AccessorID)
		if err != nil {
			return fmt.Errorf("read ACL token %q: %w", ott.AccessorID, err)
		}
		if tok == nil || !now.Before(ott.ExpiresAt) {
			gone = append(gone, raw)
		}
	}
	for _, raw := range gone {
		if err := w.txn.Delete(TableOneTimeTokens, raw); err != nil {
			return fmt.Errorf("delete one-time token: %w", err)
		}
	}
	if len(gone) > 0 {
		w.markTable(TableOneTimeTokens)
	}
	return nil
}

// ACLAuthMethod restores an auth method.
func (r *Restorer) ACLAuthMethod(m *structs.ACLAuthMethod) error {
	return r.insert(TableACLAuthMethods, m)
}

// ACLBindingRule restores a binding rule.
func (r *Restorer) ACLBindingRule(b *structs.ACLBindingRule) error {
	return r.insert(TableACLBindingRules, b)
}

// OneTimeToken restores a one-time token.
func (r *Restorer) OneTimeToken(t *structs.OneTimeToken) error {
	return r.insert(TableOneTimeTokens, t)
}
