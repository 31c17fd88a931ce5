package state

import (
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// NodeByID returns a node, or nil.
func (r *reader) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	return first[*structs.Node](r, ws, TableNodes, "id", id)
}

// Nodes returns every node.
func (r *reader) Nodes(ws memdb.WatchSet) ([]*structs.Node, error) {
	return get[*structs.Node](r, ws, TableNodes, "id")
}

// NodesByIDPrefix returns the nodes whose ID starts with prefix.
func (r *reader) NodesByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Node, error) {
	return get[*structs.Node](r, ws, TableNodes, "id_prefix", prefix)
}

// UpsertNode registers or updates a node, which becomes the store's. A
// re-registration keeps the node's CreateIndex, events, drain and
// scheduling eligibility, which the servers own.
func (w *WriteTxn) UpsertNode(node *structs.Node) error {
	if node == nil || node.ID == "" {
		return fmt.Errorf("upsert node: missing node ID")
	}
	raw, err := w.txn.First(TableNodes, "id", node.ID)
	if err != nil {
		return fmt.Errorf("upsert node %q: %w", node.ID, err)
	}
	node.CreateIndex = w.index
	if raw != nil {
		existing := raw.(*structs.Node)
		node.CreateIndex = existing.CreateIndex
		// Eligibility is the operator's (node eligibility, drains): a
		// client registering again keeps what the servers have.
		node.SchedulingEligibility = existing.SchedulingEligibility
		// The servers keep a node's events; its client sends none. Drains
		// are the servers' too.
		node.Events = existing.Events
		node.DrainStrategy = existing.DrainStrategy
		node.Drain = existing.DrainStrategy != nil
		node.LastDrain = existing.LastDrain
	} else {
		node.Events = []*structs.NodeEvent{{
			Message: structs.NodeEventRegistered, Subsystem: structs.NodeEventSubsystemCluster,
			Timestamp: time.Unix(node.StatusUpdatedAt, 0).UTC(), CreateIndex: w.index,
		}}
	}
	if node.SchedulingEligibility == "" {
		node.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	node.ModifyIndex = w.index
	node.ComputedClass = node.ComputeClass() // the scheduler's feasibility cache key
	if err := w.txn.Insert(TableNodes, node); err != nil {
		return fmt.Errorf("upsert node %q: %w", node.ID, err)
	}
	w.markTable(TableNodes)
	return nil
}

// UpdateNodeStatus sets a node's status; updatedAt is Unix seconds.
func (w *WriteTxn) UpdateNodeStatus(nodeID, status string, updatedAt int64) error {
	raw, err := w.txn.First(TableNodes, "id", nodeID)
	if err != nil {
		return fmt.Errorf("update status of node %q: %w", nodeID, err)
	}
	if raw == nil {
		return structs.NotFound("node", nodeID)
	}
	c := raw.(*structs.Node).Copy()
	c.Status = status
	c.StatusUpdatedAt = updatedAt
	c.ModifyIndex = w.index
	if err := w.txn.Insert(TableNodes, c); err != nil {
		return fmt.Errorf("update status of node %q: %w", nodeID, err)
	}
	if status == structs.NodeStatusDown {
		if err := w.deleteServicesOfNode(nodeID); err != nil { // services.go
			return err
		}
	}
	w.markTable(TableNodes)
	return nil
}

// DeleteNode removes a node.
func (w *WriteTxn) DeleteNode(nodeID string) error {
	raw, err := w.txn.First(TableNodes, "id", nodeID)
	if err != nil {
		return fmt.Errorf("delete node %q: %w", nodeID, err)
	}
	if raw == nil {
		return structs.NotFound("node", nodeID)
	}
	if err := w.txn.Delete(TableNodes, raw); err != nil {
		return fmt.Errorf("delete node %q: %w", nodeID, err)
	}
	if err := w.deleteServicesOfNode(nodeID); err != nil { // services.go
		return err
	}
	w.markTable(TableNodes)
	return nil
}
