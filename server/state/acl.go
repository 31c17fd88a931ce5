package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// The ACL tables: policies by name, tokens by accessor and secret ID,
// roles by ID and name, and the ACL bookkeeping (bootstrap, server
// secret).
const (
	TableACLPolicies = "acl_policy"
	TableACLTokens   = "acl_token"
	TableACLRoles    = "acl_role"
	TableACLState    = "acl_state"
)

// ACLTables are every ACL table: their largest index changes whenever a
// token, policy or role does (resolved tokens are cached by it).
var ACLTables = []string{TableACLPolicies, TableACLTokens, TableACLRoles, TableACLState}

func aclPoliciesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableACLPolicies, Indexes: map[string]*memdb.IndexSchema{
		"id": stringIndex("id", "Name", true, false),
	}}
}

func aclTokensSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableACLTokens, Indexes: map[string]*memdb.IndexSchema{
		"id":     stringIndex("id", "AccessorID", true, false),
		"secret": stringIndex("secret", "SecretID", true, false),
	}}
}

func aclRolesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableACLRoles, Indexes: map[string]*memdb.IndexSchema{
		"id":   stringIndex("id", "ID", true, false),
		"name": stringIndex("name", "Name", true, false),
	}}
}

// ACLIndex returns the largest index of the ACL tables.
func (r *reader) ACLIndex() uint64 { return r.MaxIndex(ACLTables...) }

// ACLState returns the ACL bookkeeping; a zero value before any was
// written.
func (r *reader) ACLState(ws memdb.WatchSet) (*structs.ACLState, error) {
	s, err := first[*structs.ACLState](r, ws, TableACLState, "id")
	if err != nil || s != nil {
		return s, err
	}
	return &structs.ACLState{}, nil
}

// ACLPolicyByName returns a policy, nil when there is none.
func (r *reader) ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return first[*structs.ACLPolicy](r, ws, TableACLPolicies, "id", name)
}

// ACLPolicies returns the policies whose name starts with prefix, by name.
func (r *reader) ACLPolicies(ws memdb.WatchSet, prefix string) ([]*structs.ACLPolicy, error) {
	return get[*structs.ACLPolicy](r, ws, TableACLPolicies, "id_prefix", prefix)
}

// ACLTokenByAccessor returns a token, nil when there is none.
func (r *reader) ACLTokenByAccessor(ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](r, ws, TableACLTokens, "id", id)
}

// ACLTokenBySecret returns a token, nil when there is none.
func (r *reader) ACLTokenBySecret(ws memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](r, ws, TableACLTokens, "secret", secret)
}

// ACLTokens returns the tokens whose accessor ID starts with prefix.
func (r *reader) ACLTokens(ws memdb.WatchSet, prefix string) ([]*structs.ACLToken, error) {
	return get[*structs.ACLToken](r, ws, TableACLTokens, "id_prefix", prefix)
}

// ACLRoleByID returns a role, nil when there is none.
func (r *reader) ACLRoleByID(ws memdb.WatchSet, id string) (*structs.ACLRole, error) {
	return first[*structs.ACLRole](r, ws, TableACLRoles, "id", id)
}

// ACLRoleByName returns a role, nil when there is none.
func (r *reader) ACLRoleByName(ws memdb.WatchSet, name string) (*structs.ACLRole, error) {
	return first[*structs.ACLRole](r, ws, TableACLRoles, "name", name)
}

// ACLRoles returns the roles whose name starts with prefix, by name.
func (r *reader) ACLRoles(ws memdb.WatchSet, prefix string) ([]*structs.ACLRole, error) {
	return get[*structs.ACLRole](r, ws, TableACLRoles, "name_prefix", prefix)
}

// SetACLState stores the ACL bookkeeping.
func (w *WriteTxn) SetACLState(s *structs.ACLState) error {
	c := *s
	if err := w.txn.Insert(TableACLState, &c); err != nil {
		return fmt.Errorf("store ACL state: %w", err)
	}
	w.markTable(TableACLState)
	return nil
}

// ACLState returns the ACL bookkeeping in the write's transaction.
func (w *WriteTxn) ACLState() (*structs.ACLState, error) {
	raw, err := w.txn.First(TableACLState, "id")
	if err != nil {
		return nil, fmt.Errorf("read ACL state: %w", err)
	}
	if raw == nil {
		return &structs.ACLState{}, nil
	}
	c := *raw.(*structs.ACLState)
	return &c, nil
}

// UpsertACLPolicy stores a policy (owned by the store from now on),
// keeping the CreateIndex of the one it replaces.
func (w *WriteTxn) UpsertACLPolicy(p *structs.ACLPolicy) error {
	raw, err := w.txn.First(TableACLPolicies, "id", p.Name)
	if err != nil {
		return fmt.Errorf("upsert ACL policy %q: %w", p.Name, err)
	}
	p.CreateIndex = w.index
	if raw != nil {
		p.CreateIndex = raw.(*structs.ACLPolicy).CreateIndex
	}
	p.ModifyIndex = w.index
	if err := w.txn.Insert(TableACLPolicies, p); err != nil {
		return fmt.Errorf("upsert ACL policy %q: %w", p.Name, err)
	}
	w.markTable(TableACLPolicies)
	return nil
}

// DeleteACLPolicy removes a policy; an unknown one is KindNotFound.
func (w *WriteTxn) DeleteACLPolicy(name string) error {
	raw, err := w.txn.First(TableACLPolicies, "id", name)
	if err != nil {
		return fmt.Errorf("delete ACL policy %q: %w", name, err)
	}
	if raw == nil {
		return structs.NotFound("ACL policy", name)
	}
	if err := w.txn.Delete(TableACLPolicies, raw); err != nil {
		return fmt.Errorf("delete ACL policy %q: %w", name, err)
	}
	w.markTable(TableACLPolicies)
	return nil
}

// UpsertACLToken stores a token (owned by the store from now on), keeping
// the CreateIndex and CreateTime of the one it replaces.
func (w *WriteTxn) UpsertACLToken(t *structs.ACLToken) error {
	raw, err := w.txn.First(TableACLTokens, "id", t.AccessorID)
	if err != nil {
		return fmt.Errorf("upsert ACL token %q: %w", t.AccessorID, err)
	}
	t.CreateIndex = w.index
	if raw != nil {
		old := raw.(*structs.ACLToken)
		t.CreateIndex, t.CreateTime, t.SecretID = old.CreateIndex, old.CreateTime, old.SecretID
		t.ExpirationTime, t.ExpirationTTL = old.ExpirationTime, old.ExpirationTTL
	}
	t.ModifyIndex = w.index
	if err := w.txn.Insert(TableACLTokens, t); err != nil {
		return fmt.Errorf("upsert ACL token %q: %w", t.AccessorID, err)
	}
	w.markTable(TableACLTokens)
	return nil
}

// DeleteACLToken removes a token; an unknown one is KindNotFound.
func (w *WriteTxn) DeleteACLToken(accessor string) error {
	raw, err := w.txn.First(TableACLTokens, "id", accessor)
	if err != nil {
		return fmt.Errorf("delete ACL token %q: %w", accessor, err)
	}
	if raw == nil {
		return structs.NotFound("ACL token", accessor)
	}
	if err := w.txn.Delete(TableACLTokens, raw); err != nil {
		return fmt.Errorf("delete ACL token %q: %w", accessor, err)
	}
	w.markTable(TableACLTokens)
	return nil
}

// UpsertACLRole stores a role (owned by the store from now on); its name
// must not be another role's.
func (w *WriteTxn) UpsertACLRole(r *structs.ACLRole) error {
	other, err := w.txn.First(TableACLRoles, "name", r.Name)
	if err != nil {
		return fmt.Errorf("upsert ACL role %q: %w", r.Name, err)
	}
	if other != nil && other.(*structs.ACLRole).ID != r.ID {
		return structs.NewError(structs.KindConflict, "ACL role with name %s already exists", r.Name)
	}
	raw, err := w.txn.First(TableACLRoles, "id", r.ID)
	if err != nil {
		return fmt.Errorf("upsert ACL role %q: %w", r.Name, err)
	}
	r.CreateIndex = w.index
	if raw != nil {
		r.CreateIndex = raw.(*structs.ACLRole).CreateIndex
	}
	r.ModifyIndex = w.index
	if err := w.txn.Insert(TableACLRoles, r); err != nil {
		return fmt.Errorf("upsert ACL role %q: %w", r.Name, err)
	}
	w.markTable(TableACLRoles)
	return nil
}

// DeleteACLRole removes a role by ID; an unknown one is KindNotFound.
func (w *WriteTxn) DeleteACLRole(id string) error {
	raw, err := w.txn.First(TableACLRoles, "id", id)
	if err != nil {
		return fmt.Errorf("delete ACL role %q: %w", id, err)
	}
	if raw == nil {
		return structs.NotFound("ACL role", id)
	}
	if err := w.txn.Delete(TableACLRoles, raw); err != nil {
		return fmt.Errorf("delete ACL role %q: %w", id, err)
	}
	w.markTable(TableACLRoles)
	return nil
}

// ACLPolicy restores a policy.
func (r *Restorer) ACLPolicy(p *structs.ACLPolicy) error { return r.insert(TableACLPolicies, p) }

// ACLToken restores a token.
func (r *Restorer) ACLToken(t *structs.ACLToken) error { return r.insert(TableACLTokens, t) }

// ACLRole restores a role.
func (r *Restorer) ACLRole(ro *structs.ACLRole) error { return r.insert(TableACLRoles, ro) }

// ACLState restores the ACL bookkeeping.
func (r *Restorer) ACLState(s *structs.ACLState) error { return r.insert(TableACLState, s) }

// NodeBySecret returns the node whose secret ID is secret, or nil: a
// node's calls present it as their token.
func (r *reader) NodeBySecret(ws memdb.WatchSet, secret string) (*structs.Node, error) {
	if secret == "" {
		return nil, nil
	}
	return first[*structs.Node](r, ws, TableNodes, "secret", secret)
}

// ACLWatch returns channels that close when an ACL table next changes
// (one per table), and the ACL tables' index now: a cache of resolved
// tokens checks them without reading the tables.
func (r *reader) ACLWatch() ([]<-chan struct{}, uint64, error) {
	txn := r.db.Txn(false)
	out := make([]<-chan struct{}, 0, len(ACLTables))
	var idx uint64
	for _, t := range ACLTables {
		ch, raw, err := txn.FirstWatch(TableIndex, "id", t)
		if err != nil {
			return nil, 0, fmt.Errorf("watch the index of %s: %w", t, err)
		}
		out = append(out, ch)
		if raw != nil {
			idx = max(idx, raw.(*indexEntry).Value)
		}
	}
	return out, idx, nil
}
