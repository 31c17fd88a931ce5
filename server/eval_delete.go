package server

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-bexpr"

	"github.com/drover-io/drover/structs"
)

// maxEvalDelete bounds the evaluations one delete request removes (one
// raft entry): a filter matching more deletes this many; run it again.
const maxEvalDelete = 10_000

// EvalDeleteCommand deletes evaluations (EvalDeleteRequestType).
type EvalDeleteCommand struct {
	EvalIDs []string
}

// EvalDelete deletes evaluations by ID or by filter, as Nomad's eval
// delete: an operator's tool for a backlog of evaluations that should not
// run. The eval broker must be paused first (operator scheduler
// set-config -pause-eval-broker=true), so that no worker holds one of
// them; an evaluation whose allocations still run is refused (stop its
// job instead). An unknown ID is KindNotFound and deletes nothing.
func (s *Server) EvalDelete(ctx context.Context, req *structs.EvalDeleteRequest) (*structs.EvalDeleteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || (len(req.EvalIDs) == 0) == (req.Filter == "") {
		return nil, structs.Invalid("name the evaluations to delete by ID or by filter, not both and not neither")
	}
	if r, ok, err := replayed(s, req.RequestID, completeEvalDelete); ok || err != nil {
		return r, err
	}
	st := s.fsm.State()
	cfg, err := st.SchedulerConfig(nil)
	if err != nil {
		return nil, fmt.Errorf("read scheduler configuration: %w", err)
	}
	if cfg == nil || !cfg.PauseEvalBroker {
		return nil, structs.Invalid("eval broker is enabled; eval broker must be paused to delete evals " +
			"(drover operator scheduler set-config -pause-eval-broker=true, and false once done)")
	}
	var evals []*structs.Evaluation
	if req.Filter != "" {
		eval, err := bexpr.CreateEvaluator(req.Filter)
		if err != nil {
			return nil, structs.Invalid("filter %q: %v", req.Filter, err)
		}
		all, err := st.EvalsByIDPrefix(nil, "")
		if err != nil {
			return nil, fmt.Errorf("read evaluations: %w", err)
		}
		for _, e := range all {
			ok, err := eval.Evaluate(e)
			if err != nil {
				return nil, structs.Invalid("filter %q on evaluation %s: %v", req.Filter, e.ID, err)
			}
			if ok && len(evals) < maxEvalDelete {
				evals = append(evals, e)
			}
		}
	} else {
		if len(req.EvalIDs) > maxEvalDelete {
			return nil, structs.Invalid("%d evaluations named: delete at most %d at once", len(req.EvalIDs), maxEvalDelete)
		}
		for _, id := range req.EvalIDs {
			e, err := st.EvalByID(nil, id)
			if err != nil {
				return nil, fmt.Errorf("read evaluation %q: %w", id, err)
			}
			if e == nil {
				return nil, structs.NewError(structs.KindNotFound, "eval not found: %s", id)
			}
			evals = append(evals, e)
		}
	}
	ids := make([]string, 0, len(evals))
	for _, e := range evals {
		if err := s.evalDeletable(e); err != nil {
			return nil, err
		}
		ids = append(ids, e.ID)
	}
	if len(ids) == 0 {
		return &structs.EvalDeleteResponse{WriteMeta: structs.WriteMeta{Index: max(st.LatestIndex(), 1)}}, nil
	}
	resp, err := applyWrite(s, req.RequestID, EvalDeleteRequestType, &EvalDeleteCommand{EvalIDs: ids},
		&structs.EvalDeleteResponse{Count: len(ids)}, completeEvalDelete)
	if err != nil {
		return nil, err
	}
	s.logger.Info("evaluations deleted", "count", len(ids), "filter", req.Filter)
	return resp, nil
}

// evalDeletable refuses an evaluation whose allocations still run: they
// belong to their job, and deleting their evaluation would hide how they
// were placed.
func (s *Server) evalDeletable(e *structs.Evaluation) error {
	allocs, err := s.fsm.State().AllocsByEval(nil, e.ID)
	if err != nil {
		return fmt.Errorf("read allocations of evaluation %q: %w", e.ID, err)
	}
	for _, a := range allocs {
		if !a.ServerTerminalStatus() && !a.ClientTerminalStatus() {
			return structs.Invalid("evaluation %s placed allocation %s, which still runs: stop its job (job stop %s) before deleting it", e.ID, a.ID, e.JobID)
		}
	}
	return nil
}

// completeEvalDelete completes a delete's reply with its index.
func completeEvalDelete(r *structs.EvalDeleteResponse, index uint64, _ any) { r.Index = index }
