package server

import (
	"fmt"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The raft commands of drains, eligibility and the servers' garbage
// collection.

// NodeDrainCommand changes a node's drain or eligibility, and stores the
// evaluations the change calls for.
type NodeDrainCommand struct {
	Update state.NodeDrainUpdate
	Evals  []*structs.Evaluation
}

// AllocTransitionCommand sets allocations' desired transitions (a drain
// marks those to migrate) and stores the evaluations that act on them.
type AllocTransitionCommand struct {
	Transitions map[string]structs.DesiredTransition
	Evals       []*structs.Evaluation
}

// GCCommand deletes what the garbage collector found: evaluations and
// allocations by ID, jobs (with their versions and summaries),
// deployments and nodes. With ReconcileSummaries it recomputes every
// job's summary instead (system reconcile summaries).
type GCCommand struct {
	Evals              []string
	Allocs             []string
	Jobs               []structs.NamespacedID
	Deployments        []string
	Nodes              []string
	ReconcileSummaries bool
}

// applyNodeOps applies one of the commands above.
func (f *FSM) applyNodeOps(t MessageType, body []byte, batch func(func(w *state.WriteTxn) error) error, evals *[]*structs.Evaluation, capacity *bool) error {
	switch t {
	case NodeUpdateDrainRequestType:
		var cmd NodeDrainCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		*evals = cmd.Evals
		// A node made eligible, or whose drain ended, may take work.
		*capacity = cmd.Update.Eligibility == structs.NodeSchedulingEligible
		return batch(func(w *state.WriteTxn) error {
			if err := w.UpdateNodeDrain(&cmd.Update); err != nil {
				return err
			}
			return w.UpsertEvals(cmd.Evals)
		})
	case AllocDesiredTransitionRequestType:
		var cmd AllocTransitionCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		*evals = cmd.Evals
		return batch(func(w *state.WriteTxn) error {
			if err := w.UpdateAllocsDesiredTransitions(cmd.Transitions); err != nil {
				return err
			}
			return w.UpsertEvals(cmd.Evals)
		})
	case GCRequestType:
		var cmd GCCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.ReconcileSummaries {
			return batch(func(w *state.WriteTxn) error { return w.ReconcileSummaries() })
		}
		return batch(func(w *state.WriteTxn) error {
			return w.DeleteGarbage(&state.Garbage{
				Evals: cmd.Evals, Allocs: cmd.Allocs, Jobs: cmd.Jobs,
				Deployments: cmd.Deployments, Nodes: cmd.Nodes,
			})
		})
	}
	return fmt.Errorf("not a node or GC command: %s", t)
}
