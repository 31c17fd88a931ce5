package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// DeploymentByID returns a deployment, or nil.
func (r *reader) DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	return first[*structs.Deployment](r, ws, TableDeployment, "id", id)
}

// DeploymentsByIDPrefix returns the deployments whose ID starts with prefix.
func (r *reader) DeploymentsByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Deployment, error) {
	return get[*structs.Deployment](r, ws, TableDeployment, "id_prefix", prefix)
}

// Deployments returns every deployment, newest first.
func (r *reader) Deployments(ws memdb.WatchSet) ([]*structs.Deployment, error) {
	out, err := get[*structs.Deployment](r, ws, TableDeployment, "id")
	sortDeployments(out)
	return out, err
}

// DeploymentsByJob returns a job's deployments, newest first.
func (r *reader) DeploymentsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Deployment, error) {
	out, err := get[*structs.Deployment](r, ws, TableDeployment, "job", namespace, jobID)
	sortDeployments(out)
	return out, err
}

// LatestDeploymentByJob returns a job's most recent deployment, or nil.
func (r *reader) LatestDeploymentByJob(ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error) {
	ds, err := r.DeploymentsByJob(ws, namespace, jobID)
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	return ds[0], nil
}

func sortDeployments(ds []*structs.Deployment) {
	sort.Slice(ds, func(i, k int) bool {
		if ds[i].CreateIndex != ds[k].CreateIndex {
			return ds[i].CreateIndex > ds[k].CreateIndex
		}
		return ds[i].ID < ds[k].ID
	})
}

// UpsertDeployment stores a deployment (owned by the store from now on);
// the store sets its indexes. A deployment that turns successful marks
// its job version stable.
func (w *WriteTxn) UpsertDeployment(d *structs.Deployment) error {
	if d == nil || d.ID == "" {
		return fmt.Errorf("upsert deployment: missing ID")
	}
	raw, err := w.txn.First(TableDeployment, "id", d.ID)
	if err != nil {
		return fmt.Errorf("upsert deployment %q: %w", d.ID, err)
	}
	d.CreateIndex = w.index
	wasSuccessful := false
	var existing *structs.Deployment
	if raw != nil {
		existing = raw.(*structs.Deployment)
		d.CreateIndex = existing.CreateIndex
		wasSuccessful = existing.Status == structs.DeploymentStatusSuccessful
	}
	d.ModifyIndex = w.index
	if err := w.txn.Insert(TableDeployment, d); err != nil {
		return fmt.Errorf("upsert deployment %q: %w", d.ID, err)
	}
	w.markTable(TableDeployment)
	if err := w.promoteCanaries(existing, d); err != nil {
		return err
	}
	if d.Status == structs.DeploymentStatusSuccessful && !wasSuccessful {
		return w.SetJobStable(d.Namespace, d.JobID, d.JobVersion)
	}
	return nil
}

// promoteCanaries clears the canary flag of the canaries of each group
// that d promotes (promoted in d, not in existing): they become ordinary
// allocations of the new version, which their clients see (services
// register their tags instead of their canary_tags).
func (w *WriteTxn) promoteCanaries(existing, d *structs.Deployment) error {
	for name, g := range d.TaskGroups {
		if !g.Promoted {
			continue
		}
		if existing != nil && existing.TaskGroups[name] != nil && existing.TaskGroups[name].Promoted {
			continue
		}
		for _, id := range g.PlacedCanaries {
			raw, err := w.txn.First(TableAllocs, "id", id)
			if err != nil {
				return fmt.Errorf("promote canary %q: %w", id, err)
			}
			if raw == nil {
				continue
			}
			a := raw.(*structs.Allocation)
			if a.DeploymentStatus == nil || !a.DeploymentStatus.Canary {
				continue
			}
			c := a.Copy()
			c.DeploymentStatus.Canary = false
			c.DeploymentStatus.ModifyIndex = w.index
			c.ModifyIndex, c.AllocModifyIndex = w.index, w.index
			if err := w.txn.Insert(TableAllocs, c); err != nil {
				return fmt.Errorf("promote canary %q: %w", id, err)
			}
			w.markTable(TableAllocs)
			w.touchJob(c.Namespace, c.JobID)
		}
	}
	return nil
}

// Deployment restores a deployment.
func (r *Restorer) Deployment(d *structs.Deployment) error { return r.insert(TableDeployment, d) }
