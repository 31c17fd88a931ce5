package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TableServices holds structs.ServiceRegistration: the instances of Nomad
// services. A registration lives only as long as its allocation runs:
// the writes that make an allocation terminal, or mark its node down or
// remove it, delete its registrations in the same transaction.
const TableServices = "service_registrations"

func servicesSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableServices, Indexes: map[string]*memdb.IndexSchema{
		"id": nsIDIndex("ID"),
		"service_name": {
			Name: "service_name",
			Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "ServiceName"},
			}},
		},
		"alloc": stringIndex("alloc", "AllocID", false, false),
		"node":  stringIndex("node", "NodeID", false, false),
	}}
}

// ServiceRegistrations returns the registrations of namespace ("*": every
// namespace), ordered by namespace, service name and ID.
func (r *reader) ServiceRegistrations(ws memdb.WatchSet, namespace string) ([]*structs.ServiceRegistration, error) {
	var out []*structs.ServiceRegistration
	var err error
	if namespace == "*" {
		out, err = get[*structs.ServiceRegistration](r, ws, TableServices, "id")
	} else {
		out, err = get[*structs.ServiceRegistration](r, ws, TableServices, "id_prefix", namespace, "")
	}
	sortRegistrations(out)
	return out, err
}

// ServiceRegistrationsByName returns the instances of a service in
// namespace, ordered by ID.
func (r *reader) ServiceRegistrationsByName(ws memdb.WatchSet, namespace, name string) ([]*structs.ServiceRegistration, error) {
	out, err := get[*structs.ServiceRegistration](r, ws, TableServices, "service_name", namespace, name)
	sortRegistrations(out)
	return out, err
}

// ServiceRegistrationsByAlloc returns the registrations of an allocation.
func (r *reader) ServiceRegistrationsByAlloc(ws memdb.WatchSet, allocID string) ([]*structs.ServiceRegistration, error) {
	out, err := get[*structs.ServiceRegistration](r, ws, TableServices, "alloc", allocID)
	sortRegistrations(out)
	return out, err
}

// ServiceRegistrationByID returns one registration, or nil.
func (r *reader) ServiceRegistrationByID(ws memdb.WatchSet, namespace, id string) (*structs.ServiceRegistration, error) {
	return first[*structs.ServiceRegistration](r, ws, TableServices, "id", namespace, id)
}

func sortRegistrations(regs []*structs.ServiceRegistration) {
	sort.Slice(regs, func(i, k int) bool {
		a, b := regs[i], regs[k]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.ServiceName != b.ServiceName {
			return a.ServiceName < b.ServiceName
		}
		return a.ID < b.ID
	})
}

// UpsertServiceRegistrations stores registrations, which become the
// store's. One whose allocation is unknown, terminal or not on the
// registration's node is skipped (a late write from a client whose task
// just stopped must not bring it back); one equal to the stored one is
// left as it is. It returns how many it stored.
func (w *WriteTxn) UpsertServiceRegistrations(regs []*structs.ServiceRegistration) (int, error) {
	n := 0
	for _, reg := range regs {
		raw, err := w.txn.First(TableAllocs, "id", reg.AllocID)
		if err != nil {
			return n, fmt.Errorf("upsert service %q: read alloc: %w", reg.ID, err)
		}
		if raw == nil {
			continue
		}
		alloc := raw.(*structs.Allocation)
		if alloc.ClientTerminalStatus() || alloc.NodeID != reg.NodeID {
			continue
		}
		existing, err := w.txn.First(TableServices, "id", reg.Namespace, reg.ID)
		if err != nil {
			return n, fmt.Errorf("upsert service %q: %w", reg.ID, err)
		}
		reg.CreateIndex = w.index
		if existing != nil {
			old := existing.(*structs.ServiceRegistration)
			if old.Equal(reg) {
				continue
			}
			reg.CreateIndex = old.CreateIndex
		}
		reg.ModifyIndex = w.index
		if err := w.txn.Insert(TableServices, reg); err != nil {
			return n, fmt.Errorf("upsert service %q: %w", reg.ID, err)
		}
		w.markTable(TableServices)
		n++
	}
	return n, nil
}

// DeleteServiceRegistrations deletes registrations by ID in namespace. It
// returns how many it deleted.
func (w *WriteTxn) DeleteServiceRegistrations(namespace string, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		raw, err := w.txn.First(TableServices, "id", namespace, id)
		if err != nil {
			return n, fmt.Errorf("delete service %q: %w", id, err)
		}
		if raw == nil {
			continue
		}
		if err := w.txn.Delete(TableServices, raw); err != nil {
			return n, fmt.Errorf("delete service %q: %w", id, err)
		}
		w.markTable(TableServices)
		n++
	}
	return n, nil
}

// DeleteServiceRegistrationsByAlloc deletes every registration of the
// allocations. It returns how many it deleted.
func (w *WriteTxn) DeleteServiceRegistrationsByAlloc(allocIDs []string) (int, error) {
	n := 0
	for _, id := range allocIDs {
		d, err := w.txn.DeleteAll(TableServices, "alloc", id)
		if err != nil {
			return n, fmt.Errorf("delete services of alloc %q: %w", id, err)
		}
		if d > 0 {
			w.markTable(TableServices)
		}
		n += d
	}
	return n, nil
}

// deleteServicesOfNode deletes every registration of a node's
// allocations: the node is down or gone, and nothing it registered can be
// reached any more.
func (w *WriteTxn) deleteServicesOfNode(nodeID string) error {
	d, err := w.txn.DeleteAll(TableServices, "node", nodeID)
	if err != nil {
		return fmt.Errorf("delete services of node %q: %w", nodeID, err)
	}
	if d > 0 {
		w.markTable(TableServices)
	}
	return nil
}

// ServiceRegistration restores a registration.
func (r *Restorer) ServiceRegistration(reg *structs.ServiceRegistration) error {
	return r.insert(TableServices, reg)
}
