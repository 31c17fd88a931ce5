package state

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TableNodePools holds the node pools an operator created. The built-in
// pools ("default", "all") exist without a row, and so does a pool named
// by a registered node until an operator writes it.
const TableNodePools = "node_pools"

func nodePoolsSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableNodePools, Indexes: map[string]*memdb.IndexSchema{
		"id": stringIndex("id", "Name", true, false),
	}}
}

// NodePoolByName returns a node pool, or nil when there is none of that
// name: a stored pool, a built-in one, or one a node is in.
func (r *reader) NodePoolByName(ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	p, err := first[*structs.NodePool](r, ws, TableNodePools, "id", name)
	if err != nil || p != nil {
		return p, err
	}
	for _, b := range structs.BuiltinNodePools() {
		if b.Name == name {
			return b, nil
		}
	}
	nodes, err := get[*structs.Node](r, ws, TableNodes, "id")
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if structs.NodePoolOf(n) == name {
			return &structs.NodePool{Name: name, CreateIndex: n.CreateIndex, ModifyIndex: n.CreateIndex}, nil
		}
	}
	return nil, nil
}

// NodePools returns the node pools whose name starts with prefix, by name:
// the stored ones, the built-in ones, and those registered nodes are in.
func (r *reader) NodePools(ws memdb.WatchSet, prefix string) ([]*structs.NodePool, error) {
	out, err := get[*structs.NodePool](r, ws, TableNodePools, "id_prefix", prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range out {
		seen[p.Name] = true
	}
	add := func(p *structs.NodePool) {
		if !seen[p.Name] && strings.HasPrefix(p.Name, prefix) {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	for _, b := range structs.BuiltinNodePools() {
		add(b)
	}
	nodes, err := get[*structs.Node](r, ws, TableNodes, "id")
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		add(&structs.NodePool{Name: structs.NodePoolOf(n), CreateIndex: n.CreateIndex, ModifyIndex: n.CreateIndex})
	}
	slices.SortFunc(out, func(a, b *structs.NodePool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// StoredNodePools returns the node pools stored: what a snapshot holds.
func (r *reader) StoredNodePools() ([]*structs.NodePool, error) {
	return get[*structs.NodePool](r, nil, TableNodePools, "id")
}

// UpsertNodePool stores a node pool (owned by the store from now on),
// keeping the CreateIndex of the one it replaces.
func (w *WriteTxn) UpsertNodePool(p *structs.NodePool) error {
	if p == nil || p.Name == "" {
		return fmt.Errorf("upsert node pool: missing name")
	}
	if structs.IsBuiltinNodePool(p.Name) {
		return structs.Invalid("the built-in node pool %q cannot be changed", p.Name)
	}
	raw, err := w.txn.First(TableNodePools, "id", p.Name)
	if err != nil {
		return fmt.Errorf("upsert node pool %q: %w", p.Name, err)
	}
	p.CreateIndex = w.index
	if raw != nil {
		p.CreateIndex = raw.(*structs.NodePool).CreateIndex
	}
	p.ModifyIndex = w.index
	if err := w.txn.Insert(TableNodePools, p); err != nil {
		return fmt.Errorf("upsert node pool %q: %w", p.Name, err)
	}
	w.markTable(TableNodePools)
	return nil
}

// DeleteNodePool removes a node pool; see CanDeleteNodePool for what is
// refused.
func (w *WriteTxn) DeleteNodePool(name string) error {
	raw, err := canDeleteNodePool(w.txn, name)
	if err != nil {
		return err
	}
	if err := w.txn.Delete(TableNodePools, raw); err != nil {
		return fmt.Errorf("delete node pool %q: %w", name, err)
	}
	w.markTable(TableNodePools)
	return nil
}

// CanDeleteNodePool returns why the node pool cannot be deleted now, nil
// when it can: a built-in pool cannot be, nor one that holds a node or a
// job that is not dead; one that is not stored is a KindNotFound error.
func (r *reader) CanDeleteNodePool(name string) error {
	_, err := canDeleteNodePool(r.db.Txn(false), name)
	return err
}

// canDeleteNodePool returns the pool's row when it can be deleted.
func canDeleteNodePool(txn *memdb.Txn, name string) (any, error) {
	if structs.IsBuiltinNodePool(name) {
		return nil, structs.Invalid("the built-in node pool %q cannot be deleted", name)
	}
	raw, err := txn.First(TableNodePools, "id", name)
	if err != nil {
		return nil, fmt.Errorf("read node pool %q: %w", name, err)
	}
	if raw == nil {
		return nil, structs.NotFound("node pool", name)
	}
	it, err := txn.Get(TableNodes, "id")
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	for n := it.Next(); n != nil; n = it.Next() {
		if node := n.(*structs.Node); structs.NodePoolOf(node) == name {
			return nil, structs.NewError(structs.KindConflict, "node pool %q has nodes (%s, ...): move them to another pool first", name, node.Name)
		}
	}
	jobs, err := txn.Get(TableJobs, "id")
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	for j := jobs.Next(); j != nil; j = jobs.Next() {
		if job := j.(*structs.Job); job.NodePool == name && job.Status != structs.JobStatusDead {
			return nil, structs.NewError(structs.KindConflict, "node pool %q has jobs that are not dead (%s, ...): stop them first", name, job.ID)
		}
	}
	return raw, nil
}

// NodePool restores a node pool.
func (r *Restorer) NodePool(p *structs.NodePool) error { return r.insert(TableNodePools, p) }
