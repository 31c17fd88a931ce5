package state

import (
	"fmt"

	"github.com/drover-io/drover/structs"
)

// NodeDrainUpdate is a change of a node's drain or eligibility.
type NodeDrainUpdate struct {
	NodeID string
	// SetDrain replaces the node's DrainStrategy with DrainStrategy (nil
	// ends the drain); without it the drain is left as it is.
	SetDrain      bool
	DrainStrategy *structs.DrainStrategy
	// Eligibility, when set, replaces the node's scheduling eligibility.
	Eligibility string
	// LastDrain, when set, replaces the record of the node's last drain.
	LastDrain *structs.DrainMetadata
	// Event, when set, is appended to the node's events.
	Event *structs.NodeEvent
}

// maxNodeEvents bounds the events kept per node.
const maxNodeEvents = 10

// UpdateNodeDrain applies u to its node.
func (w *WriteTxn) UpdateNodeDrain(u *NodeDrainUpdate) error {
	raw, err := w.txn.First(TableNodes, "id", u.NodeID)
	if err != nil {
		return fmt.Errorf("update drain of node %q: %w", u.NodeID, err)
	}
	if raw == nil {
		return structs.NotFound("node", u.NodeID)
	}
	c := raw.(*structs.Node).Copy()
	if u.SetDrain {
		c.DrainStrategy = u.DrainStrategy.Copy()
		c.Drain = c.DrainStrategy != nil
	}
	if u.Eligibility != "" {
		c.SchedulingEligibility = u.Eligibility
	}
	if u.LastDrain != nil {
		c.LastDrain = u.LastDrain.Copy()
	}
	if u.Event != nil {
		e := *u.Event
		e.CreateIndex = w.index
		c.Events = append(c.Events, &e)
		if n := len(c.Events); n > maxNodeEvents {
			c.Events = c.Events[n-maxNodeEvents:]
		}
	}
	c.ModifyIndex = w.index
	if err := w.txn.Insert(TableNodes, c); err != nil {
		return fmt.Errorf("update drain of node %q: %w", u.NodeID, err)
	}
	w.markTable(TableNodes)
	return nil
}

// UpdateAllocsDesiredTransitions sets the desired transitions of
// allocations by ID (those that no longer exist are skipped). A set field
// replaces the stored one; an unset one keeps it.
func (w *WriteTxn) UpdateAllocsDesiredTransitions(transitions map[string]structs.DesiredTransition) error {
	for id, t := range transitions {
		raw, err := w.txn.First(TableAllocs, "id", id)
		if err != nil {
			return fmt.Errorf("update desired transition of alloc %q: %w", id, err)
		}
		if raw == nil {
			continue
		}
		c := raw.(*structs.Allocation).Copy()
		d := &c.DesiredTransition
		if t.Migrate != nil {
			d.Migrate = t.Migrate
		}
		if t.Reschedule != nil {
			d.Reschedule = t.Reschedule
		}
		if t.ForceReschedule != nil {
			d.ForceReschedule = t.ForceReschedule
		}
		if t.NoShutdownDelay != nil {
			d.NoShutdownDelay = t.NoShutdownDelay
		}
		c.ModifyIndex = w.index
		if err := w.txn.Insert(TableAllocs, c); err != nil {
			return fmt.Errorf("update desired transition of alloc %q: %w", id, err)
		}
		w.markTable(TableAllocs)
		w.touchJob(c.Namespace, c.JobID)
	}
	return nil
}
