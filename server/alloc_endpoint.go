package server

import (
	"context"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// AllocList lists allocations, filtered by namespace ("*" for all) and ID
// prefix.
func (s *Server) AllocList(ctx context.Context, req *structs.AllocListRequest) (*structs.AllocListResponse, error) {
	resp := &structs.AllocListResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByIDPrefix(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			if inNamespace(ns, a.Namespace) {
				stub := a.Stub()
				if req.Resources {
					stub.AllocatedResources = a.AllocatedResources
				}
				resp.Allocations = append(resp.Allocations, stub)
			}
		}
		resp.Allocations = paginate(resp.Allocations, func(a *structs.AllocListStub) string { return a.ID }, &req.QueryOptions, &resp.QueryMeta)
		return st.Index(state.TableAllocs), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// AllocGet returns one allocation by ID or unique ID prefix.
func (s *Server) AllocGet(ctx context.Context, req *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error) {
	resp := &structs.SingleAllocResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableAllocs)
		a, err := lookupAlloc(ws, st, req.AllocID)
		resp.Alloc = a
		return index, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// EvalList lists evaluations, filtered by namespace ("*" for all) and ID
// prefix.
func (s *Server) EvalList(ctx context.Context, req *structs.EvalListRequest) (*structs.EvalListResponse, error) {
	resp := &structs.EvalListResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		evals, err := st.EvalsByIDPrefix(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Evaluations = make([]*structs.Evaluation, 0, len(evals))
		for _, e := range evals {
			if inNamespace(ns, e.Namespace) {
				resp.Evaluations = append(resp.Evaluations, e)
			}
		}
		resp.Evaluations = paginate(resp.Evaluations, func(e *structs.Evaluation) string { return e.ID }, &req.QueryOptions, &resp.QueryMeta)
		return st.Index(state.TableEvals), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// EvalGet returns one evaluation by ID or unique ID prefix, with the
// evaluations related to it when asked.
func (s *Server) EvalGet(ctx context.Context, req *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error) {
	resp := &structs.SingleEvalResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableEvals)
		e, err := lookupEval(ws, st, req.EvalID)
		resp.Eval = e
		if err != nil || !req.IncludeRelated {
			return index, err
		}
		resp.Related, err = relatedEvals(ws, st, e)
		return index, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// prefixOf lower-cases an ID prefix typed by a user (IDs are lower-case).
func prefixOf(id string) string { return strings.ToLower(id) }

// relatedEvals returns the evaluations linked to e, directly or through
// others, by NextEval, PreviousEval and BlockedEval (each link is recorded
// on both of its ends), in the order found.
func relatedEvals(ws memdb.WatchSet, st *state.StateStore, e *structs.Evaluation) ([]*structs.EvaluationStub, error) {
	seen := map[string]bool{e.ID: true}
	queue := []*structs.Evaluation{e}
	out := []*structs.EvaluationStub{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, id := range []string{cur.NextEval, cur.PreviousEval, cur.BlockedEval} {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			next, err := st.EvalByID(ws, id)
			if err != nil {
				return nil, err
			}
			if next == nil {
				continue // collected meanwhile
			}
			out = append(out, next.Stub())
			queue = append(queue, next)
		}
	}
	return out, nil
}
