package state

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TableNamespaces holds the namespaces an operator created or changed. The
// default namespace exists without a row: until an operator changes it,
// reads return structs.DefaultNamespaceObject.
const TableNamespaces = "namespaces"

func namespacesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableNamespaces, Indexes: map[string]*memdb.IndexSchema{
		"id": stringIndex("id", "Name", true, false),
	}}
}

// NamespaceByName returns a namespace, or nil when there is none of that
// name. The default namespace always exists.
func (r *reader) NamespaceByName(ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	ns, err := first[*structs.Namespace](r, ws, TableNamespaces, "id", name)
	if err != nil || ns != nil || name != structs.DefaultNamespace {
		return ns, err
	}
	return structs.DefaultNamespaceObject(), nil
}

// Namespaces returns the namespaces whose name starts with prefix, by
// name, the default one included.
func (r *reader) Namespaces(ws memdb.WatchSet, prefix string) ([]*structs.Namespace, error) {
	out, err := get[*structs.Namespace](r, ws, TableNamespaces, "id_prefix", prefix)
	if err != nil {
		return nil, err
	}
	hasDefault := slices.ContainsFunc(out, func(n *structs.Namespace) bool { return n.Name == structs.DefaultNamespace })
	if !hasDefault && strings.HasPrefix(structs.DefaultNamespace, prefix) {
		out = append(out, structs.DefaultNamespaceObject())
		slices.SortFunc(out, func(a, b *structs.Namespace) int { return strings.Compare(a.Name, b.Name) })
	}
	return out, nil
}

// StoredNamespaces returns the namespaces stored (the default one only
// once an operator changed it): what a snapshot holds.
func (r *reader) StoredNamespaces() ([]*structs.Namespace, error) {
	return get[*structs.Namespace](r, nil, TableNamespaces, "id")
}

// UpsertNamespace stores a namespace (owned by the store from now on),
// keeping the CreateIndex of the one it replaces.
func (w *WriteTxn) UpsertNamespace(ns *structs.Namespace) error {
	if ns == nil || ns.Name == "" {
		return fmt.Errorf("upsert namespace: missing name")
	}
	raw, err := w.txn.First(TableNamespaces, "id", ns.Name)
	if err != nil {
		return fmt.Errorf("upsert namespace %q: %w", ns.Name, err)
	}
	ns.CreateIndex = w.index
	switch {
	case raw != nil:
		ns.CreateIndex = raw.(*structs.Namespace).CreateIndex
	case ns.Name == structs.DefaultNamespace:
		ns.CreateIndex = structs.DefaultNamespaceObject().CreateIndex
	}
	ns.ModifyIndex = w.index
	if err := w.txn.Insert(TableNamespaces, ns); err != nil {
		return fmt.Errorf("upsert namespace %q: %w", ns.Name, err)
	}
	w.markTable(TableNamespaces)
	return nil
}

// DeleteNamespace removes a namespace; see CanDeleteNamespace for what is
// refused.
func (w *WriteTxn) DeleteNamespace(name string) error {
	raw, err := canDeleteNamespace(w.txn, name)
	if err != nil {
		return err
	}
	if err := w.txn.Delete(TableNamespaces, raw); err != nil {
		return fmt.Errorf("delete namespace %q: %w", name, err)
	}
	w.markTable(TableNamespaces)
	return nil
}

// CanDeleteNamespace returns why the namespace cannot be deleted now, nil
// when it can: the default one cannot be, nor one that holds a job that is
// not dead or a variable; one that does not exist is a KindNotFound error.
func (r *reader) CanDeleteNamespace(name string) error {
	_, err := canDeleteNamespace(r.db.Txn(false), name)
	return err
}

// canDeleteNamespace returns the namespace's row when it can be deleted.
func canDeleteNamespace(txn *memdb.Txn, name string) (any, error) {
	if name == structs.DefaultNamespace {
		return nil, structs.Invalid("the default namespace cannot be deleted")
	}
	raw, err := txn.First(TableNamespaces, "id", name)
	if err != nil {
		return nil, fmt.Errorf("read namespace %q: %w", name, err)
	}
	if raw == nil {
		return nil, structs.NotFound("namespace", name)
	}
	live, err := liveJobs(txn, name)
	if err != nil {
		return nil, err
	}
	if len(live) > 0 {
		return nil, structs.NewError(structs.KindConflict, "namespace %q has jobs that are not dead (%s): stop them first (job stop -purge)",
			name, strings.Join(live, ", "))
	}
	v, err := txn.First(TableVariables, "id_prefix", name, "")
	if err != nil {
		return nil, fmt.Errorf("read the variables of namespace %q: %w", name, err)
	}
	if v != nil {
		return nil, structs.NewError(structs.KindConflict, "namespace %q has variables (%s, ...): delete them first (var purge -namespace %s PATH)",
			name, v.(*structs.VariableEncrypted).Path, name)
	}
	return raw, nil
}

// liveJobs returns the IDs of the namespace's jobs that are not dead, at
// most a few.
func liveJobs(txn *memdb.Txn, namespace string) ([]string, error) {
	const most = 5
	it, err := txn.Get(TableJobs, "id_prefix", namespace, "")
	if err != nil {
		return nil, fmt.Errorf("read the jobs of namespace %q: %w", namespace, err)
	}
	var out []string
	for raw := it.Next(); raw != nil; raw = it.Next() {
		j := raw.(*structs.Job)
		if j.Namespace != namespace || j.Status == structs.JobStatusDead {
			continue
		}
		if len(out) == most {
			out = append(out, "...")
			break
		}
		out = append(out, j.ID)
	}
	return out, nil
}

// namespaceExists reports whether the namespace exists, in the write's
// transaction.
func (w *WriteTxn) namespaceExists(name string) (bool, error) {
	if name == structs.DefaultNamespace {
		return true, nil
	}
	raw, err := w.txn.First(TableNamespaces, "id", name)
	if err != nil {
		return false, fmt.Errorf("read namespace %q: %w", name, err)
	}
	return raw != nil, nil
}

// CheckNamespace returns structs.NamespaceMissing when the namespace does
// not exist, in the write's transaction.
func (w *WriteTxn) CheckNamespace(name string) error {
	ok, err := w.namespaceExists(name)
	if err != nil {
		return err
	}
	if !ok {
		return structs.NamespaceMissing(name)
	}
	return nil
}

// Namespace restores a namespace.
func (r *Restorer) Namespace(n *structs.Namespace) error { return r.insert(TableNamespaces, n) }
