package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// AllocByID returns an allocation, or nil.
func (r *reader) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return first[*structs.Allocation](r, ws, TableAllocs, "id", id)
}

// Allocs returns every allocation.
func (r *reader) Allocs(ws memdb.WatchSet) ([]*structs.Allocation, error) {
	return get[*structs.Allocation](r, ws, TableAllocs, "id")
}

// AllocsByIDPrefix returns the allocations whose ID starts with prefix.
func (r *reader) AllocsByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Allocation, error) {
	return get[*structs.Allocation](r, ws, TableAllocs, "id_prefix", prefix)
}

// AllocsByJob returns a job's allocations, of every version.
func (r *reader) AllocsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Allocation, error) {
	return get[*structs.Allocation](r, ws, TableAllocs, "job", namespace, jobID)
}

// AllocsByNode returns the allocations placed on a node.
func (r *reader) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	return get[*structs.Allocation](r, ws, TableAllocs, "node", nodeID)
}

// AllocsByEval returns the allocations an evaluation created.
func (r *reader) AllocsByEval(ws memdb.WatchSet, evalID string) ([]*structs.Allocation, error) {
	return get[*structs.Allocation](r, ws, TableAllocs, "eval", evalID)
}

func (w *WriteTxn) allocsByJob(key structs.NamespacedID) ([]*structs.Allocation, error) {
	it, err := w.txn.Get(TableAllocs, "job", key.Namespace, key.ID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of job %q: %w", key.ID, err)
	}
	var out []*structs.Allocation
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*structs.Allocation))
	}
	return out, nil
}

// UpsertAllocs stores server-side allocation changes; see
// StateStore.UpsertAllocs. The allocations become the store's.
func (w *WriteTxn) UpsertAllocs(allocs []*structs.Allocation) error {
	for _, a := range allocs {
		if a.ID == "" {
			return fmt.Errorf("upsert alloc: missing ID")
		}
		raw, err := w.txn.First(TableAllocs, "id", a.ID)
		if err != nil {
			return fmt.Errorf("upsert alloc %q: %w", a.ID, err)
		}
		if raw == nil {
			a.CreateIndex = w.index
			if a.ClientStatus == "" {
				a.ClientStatus = structs.AllocClientStatusPending
			}
		} else {
			existing := raw.(*structs.Allocation)
			a.CreateIndex = existing.CreateIndex
			// The client owns these; the server's copy may be stale.
			a.ClientStatus = existing.ClientStatus
			a.ClientDescription = existing.ClientDescription
			a.TaskStates = existing.TaskStates
			if a.DeploymentID == existing.DeploymentID {
				a.DeploymentStatus = existing.DeploymentStatus
			} else {
				// The scheduler moved it into another deployment (an
				// in-place update): the old verdict is not the new
				// version's; the client reports that one.
				a.DeploymentStatus = a.DeploymentStatus.Copy()
			}
			a.NetworkStatus = existing.NetworkStatus
		}
		a.ModifyIndex = w.index
		a.AllocModifyIndex = w.index
		if a.Job == nil && raw != nil {
			a.Job = raw.(*structs.Allocation).Job
		}
		if err := w.txn.Insert(TableAllocs, a); err != nil {
			return fmt.Errorf("upsert alloc %q: %w", a.ID, err)
		}
		if a.ClientTerminalStatus() {
			if _, err := w.DeleteServiceRegistrationsByAlloc([]string{a.ID}); err != nil {
				return err
			}
		}
		w.markTable(TableAllocs)
		w.touchJob(a.Namespace, a.JobID)
	}
	return nil
}

// UpdateAllocsFromClient applies client updates; see
// StateStore.UpdateAllocsFromClient. Unknown allocations are skipped.
func (w *WriteTxn) UpdateAllocsFromClient(updates []*structs.Allocation) error {
	for _, u := range updates {
		raw, err := w.txn.First(TableAllocs, "id", u.ID)
		if err != nil {
			return fmt.Errorf("update alloc %q from client: %w", u.ID, err)
		}
		if raw == nil {
			continue
		}
		c := raw.(*structs.Allocation).Copy()
		c.ClientStatus = u.ClientStatus
		c.ClientDescription = u.ClientDescription
		c.TaskStates = u.TaskStates
		if u.NetworkStatus != nil {
			c.NetworkStatus = u.NetworkStatus.Copy()
		}
		if u.DeploymentStatus != nil && u.DeploymentID == c.DeploymentID {
			// The client reports health; whether the alloc is a canary
			// is the server's (promotion clears it). A verdict the
			// client decided for another deployment than the alloc's
			// (sent before it saw an in-place update move the alloc to
			// a new one) is stale: dropped. "" is no wildcard: it names
			// a verdict outside any deployment (the migrate block's),
			// which an alloc that has since joined a deployment must
			// not take as that deployment's health. The rest of the
			// update applies either way.
			canary := c.DeploymentStatus != nil && c.DeploymentStatus.Canary
			c.DeploymentStatus = u.DeploymentStatus.Copy()
			c.DeploymentStatus.Canary = canary
			c.DeploymentStatus.ModifyIndex = w.index
		}
		c.ModifyIndex = w.index
		if u.ModifyTime != 0 {
			c.ModifyTime = u.ModifyTime
		}
		if err := w.txn.Insert(TableAllocs, c); err != nil {
			return fmt.Errorf("update alloc %q from client: %w", u.ID, err)
		}
		if c.ClientTerminalStatus() {
			// Its services go with it (services.go).
			if _, err := w.DeleteServiceRegistrationsByAlloc([]string{c.ID}); err != nil {
				return err
			}
		}
		w.markTable(TableAllocs)
		w.touchJob(c.Namespace, c.JobID)
	}
	return nil
}
