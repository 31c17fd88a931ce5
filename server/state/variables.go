package state

import (
	"fmt"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// Tables of variables and of the keyring's root keys.
const (
	// TableVariables holds structs.VariableEncrypted: ciphertext only.
	TableVariables = "variables"
	// TableRootKeys holds structs.RootKey: wrapped key material only.
	TableRootKeys = "root_keys"
)

func variablesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableVariables, Indexes: map[string]*memdb.IndexSchema{
		"id": {
			Name:   "id",
			Unique: true,
			Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "Path"},
			}},
		},
		"key": stringIndex("key", "KeyID", false, false),
	}}
}

func rootKeysSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableRootKeys, Indexes: map[string]*memdb.IndexSchema{
		"id": stringIndex("id", "KeyID", true, false),
	}}
}

// VariableByPath returns the variable at path in namespace, or nil.
func (r *reader) VariableByPath(ws memdb.WatchSet, namespace, path string) (*structs.VariableEncrypted, error) {
	return first[*structs.VariableEncrypted](r, ws, TableVariables, "id", namespace, path)
}

// Variables returns the variables of namespace ("*": every namespace)
// whose path starts with prefix, ordered by namespace then path.
func (r *reader) Variables(ws memdb.WatchSet, namespace, prefix string) ([]*structs.VariableEncrypted, error) {
	if namespace != "*" {
		return get[*structs.VariableEncrypted](r, ws, TableVariables, "id_prefix", namespace, prefix)
	}
	all, err := get[*structs.VariableEncrypted](r, ws, TableVariables, "id")
	if err != nil || prefix == "" {
		return all, err
	}
	out := all[:0:0]
	for _, v := range all {
		if strings.HasPrefix(v.Path, prefix) {
			out = append(out, v)
		}
	}
	return out, nil
}

// VariablesByKeyID returns the variables encrypted with root key keyID.
func (r *reader) VariablesByKeyID(ws memdb.WatchSet, keyID string) ([]*structs.VariableEncrypted, error) {
	return get[*structs.VariableEncrypted](r, ws, TableVariables, "key", keyID)
}

// RootKeys returns every root key, oldest first.
func (r *reader) RootKeys(ws memdb.WatchSet) ([]*structs.RootKey, error) {
	keys, err := get[*structs.RootKey](r, ws, TableRootKeys, "id")
	sort.Slice(keys, func(i, k int) bool {
		if keys[i].CreateIndex != keys[k].CreateIndex {
			return keys[i].CreateIndex < keys[k].CreateIndex
		}
		return keys[i].KeyID < keys[k].KeyID
	})
	return keys, err
}

// RootKeyByID returns a root key, or nil.
func (r *reader) RootKeyByID(ws memdb.WatchSet, keyID string) (*structs.RootKey, error) {
	return first[*structs.RootKey](r, ws, TableRootKeys, "id", keyID)
}

// ActiveRootKey returns the active root key, or nil when there is none.
func (r *reader) ActiveRootKey(ws memdb.WatchSet) (*structs.RootKey, error) {
	keys, err := r.RootKeys(ws)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.State == structs.RootKeyStateActive {
			return k, nil
		}
	}
	return nil, nil
}

// SetVariable stores v (owned by the store from now on) unless check is
// not nil and differs from the stored variable's ModifyIndex (0: the
// variable must not exist), or the stored variable is locked and lockID
// is not its lock's; ok says whether it was stored. The store sets the
// indexes; an update keeps the stored CreateIndex, CreateTime and lock.
func (w *WriteTxn) SetVariable(v *structs.VariableEncrypted, check *uint64, lockID string) (ok bool, err error) {
	if v == nil || v.Namespace == "" || v.Path == "" {
		return false, fmt.Errorf("set variable: missing namespace or path")
	}
	existing, err := w.variable(v.Namespace, v.Path)
	if err != nil {
		return false, err
	}
	if !casMatches(existing, check) || !lockMatches(existing, lockID) {
		return false, nil
	}
	v.CreateIndex = w.index
	v.Lock = nil
	if existing != nil {
		v.CreateIndex = existing.CreateIndex
		v.CreateTime = existing.CreateTime
		v.Lock = existing.Lock.Copy()
	}
	v.ModifyIndex = w.index
	if err := w.txn.Insert(TableVariables, v); err != nil {
		return false, fmt.Errorf("store variable %q: %w", v.Path, err)
	}
	w.markTable(TableVariables)
	return true, nil
}

// DeleteVariable removes the variable at path in namespace, unless check
// is not nil and differs from its ModifyIndex, or it is locked and lockID
// is not its lock's; ok says whether the variable is gone (deleting one
// that does not exist without a check is ok and changes nothing).
func (w *WriteTxn) DeleteVariable(namespace, path string, check *uint64, lockID string) (ok bool, err error) {
	existing, err := w.variable(namespace, path)
	if err != nil {
		return false, err
	}
	if existing == nil {
		return check == nil || *check == 0, nil
	}
	if !casMatches(existing, check) || !lockMatches(existing, lockID) {
		return false, nil
	}
	if err := w.txn.Delete(TableVariables, existing); err != nil {
		return false, fmt.Errorf("delete variable %q: %w", path, err)
	}
	w.markTable(TableVariables)
	return true, nil
}

// RekeyVariables replaces the ciphertext and key of each variable whose
// stored ModifyIndex is still the one in vars (a write since then was
// encrypted with the active key already), keeping its indexes and times:
// the content is the same. It returns how many were replaced.
func (w *WriteTxn) RekeyVariables(vars []*structs.VariableEncrypted) (int, error) {
	n := 0
	for _, v := range vars {
		existing, err := w.variable(v.Namespace, v.Path)
		if err != nil {
			return n, err
		}
		if existing == nil || existing.ModifyIndex != v.ModifyIndex {
			continue
		}
		c := existing.Copy()
		c.KeyID, c.Data = v.KeyID, v.Data
		if err := w.txn.Insert(TableVariables, c); err != nil {
			return n, fmt.Errorf("store variable %q: %w", v.Path, err)
		}
		n++
	}
	if n > 0 {
		w.markTable(TableVariables)
	}
	return n, nil
}

func (w *WriteTxn) variable(namespace, path string) (*structs.VariableEncrypted, error) {
	raw, err := w.txn.First(TableVariables, "id", namespace, path)
	if err != nil {
		return nil, fmt.Errorf("read variable %q: %w", path, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.VariableEncrypted), nil
}

// casMatches reports whether a write checked against index check may
// apply to existing: always without a check; with check 0 only when
// there is no variable; otherwise when its ModifyIndex is check.
func casMatches(existing *structs.VariableEncrypted, check *uint64) bool {
	switch {
	case check == nil:
		return true
	case existing == nil:
		return *check == 0
	default:
		return existing.ModifyIndex == *check
	}
}

// lockMatches reports whether a write by the holder of lockID ("" for
// none) may change existing: when it is not locked, or locked with
// lockID.
func lockMatches(existing *structs.VariableEncrypted, lockID string) bool {
	return existing == nil || existing.Lock == nil || existing.Lock.ID == lockID
}

// AcquireVariableLock takes lock (its ID made by the caller) on the
// variable at path in namespace, unless it is locked already. v, when not
// nil, is the variable's new content (owned by the store from now on);
// nil keeps the stored content, and then the variable must exist. ok says
// whether the lock was taken.
func (w *WriteTxn) AcquireVariableLock(namespace, path string, lock *structs.VariableLock, v *structs.VariableEncrypted) (ok bool, err error) {
	if lock == nil || lock.ID == "" {
		return false, fmt.Errorf("acquire variable lock: missing lock ID")
	}
	existing, err := w.variable(namespace, path)
	if err != nil {
		return false, err
	}
	if existing != nil && existing.Lock != nil {
		return false, nil
	}
	switch {
	case v != nil:
		v.Namespace, v.Path = namespace, path
		v.CreateIndex = w.index
		if existing != nil {
			v.CreateIndex, v.CreateTime = existing.CreateIndex, existing.CreateTime
		}
	case existing != nil:
		v = existing.Copy()
	default:
		return false, nil
	}
	v.Lock = lock.Copy()
	v.ModifyIndex = w.index
	if err := w.txn.Insert(TableVariables, v); err != nil {
		return false, fmt.Errorf("store variable %q: %w", path, err)
	}
	w.markTable(TableVariables)
	return true, nil
}

// ReleaseVariableLock releases the lock lockID holds on the variable at
// path in namespace, keeping its content; ok says whether it held it.
func (w *WriteTxn) ReleaseVariableLock(namespace, path, lockID string) (ok bool, err error) {
	existing, err := w.variable(namespace, path)
	if err != nil {
		return false, err
	}
	if existing == nil || existing.Lock == nil || existing.Lock.ID != lockID {
		return false, nil
	}
	v := existing.Copy()
	v.Lock = nil
	v.ModifyIndex = w.index
	if err := w.txn.Insert(TableVariables, v); err != nil {
		return false, fmt.Errorf("store variable %q: %w", path, err)
	}
	w.markTable(TableVariables)
	return true, nil
}

// AddRootKey stores key (owned by the store from now on) as the active
// key, making the active one inactive, but only if the active key's ID is
// prevActive ("" when there is none): two rotations that raced do not
// both win. ok says whether it was stored.
func (w *WriteTxn) AddRootKey(key *structs.RootKey, prevActive string) (ok bool, err error) {
	if key == nil || key.KeyID == "" {
		return false, fmt.Errorf("add root key: missing key ID")
	}
	it, err := w.txn.Get(TableRootKeys, "id")
	if err != nil {
		return false, fmt.Errorf("read root keys: %w", err)
	}
	var active []*structs.RootKey
	for raw := it.Next(); raw != nil; raw = it.Next() {
		k := raw.(*structs.RootKey)
		if k.KeyID == key.KeyID {
			return false, fmt.Errorf("add root key %s: it exists", key.KeyID)
		}
		if k.State == structs.RootKeyStateActive {
			active = append(active, k)
		}
	}
	current := ""
	if len(active) > 0 {
		current = active[0].KeyID
	}
	if current != prevActive {
		return false, nil
	}
	for _, k := range active {
		c := k.Copy()
		c.State = structs.RootKeyStateInactive
		c.ModifyIndex = w.index
		if err := w.txn.Insert(TableRootKeys, c); err != nil {
			return false, fmt.Errorf("store root key %s: %w", c.KeyID, err)
		}
	}
	key.State = structs.RootKeyStateActive
	key.CreateIndex, key.ModifyIndex = w.index, w.index
	if err := w.txn.Insert(TableRootKeys, key); err != nil {
		return false, fmt.Errorf("store root key %s: %w", key.KeyID, err)
	}
	w.markTable(TableRootKeys)
	return true, nil
}

// DeleteRootKey removes an inactive root key. It removes none and returns
// how many variables are encrypted with it when there are some and force
// is false. Removing the active key, or one that does not exist, is a
// KindInvalid or KindNotFound error (checked before proposing).
func (w *WriteTxn) DeleteRootKey(keyID string, force bool) (inUse int, err error) {
	raw, err := w.txn.First(TableRootKeys, "id", keyID)
	if err != nil {
		return 0, fmt.Errorf("read root key %s: %w", keyID, err)
	}
	if raw == nil {
		return 0, structs.NotFound("root key", keyID)
	}
	key := raw.(*structs.RootKey)
	if key.State == structs.RootKeyStateActive {
		return 0, structs.Invalid("root key %s is active: rotate the keyring first", keyID)
	}
	if !force {
		it, err := w.txn.Get(TableVariables, "key", keyID)
		if err != nil {
			return 0, fmt.Errorf("read variables of root key %s: %w", keyID, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			inUse++
		}
		if inUse > 0 {
			return inUse, nil
		}
	}
	if err := w.txn.Delete(TableRootKeys, key); err != nil {
		return 0, fmt.Errorf("delete root key %s: %w", keyID, err)
	}
	w.markTable(TableRootKeys)
	return 0, nil
}

// Variable restores a variable.
func (r *Restorer) Variable(v *structs.VariableEncrypted) error { return r.insert(TableVariables, v) }

// RootKey restores a root key.
func (r *Restorer) RootKey(k *structs.RootKey) error { return r.insert(TableRootKeys, k) }
