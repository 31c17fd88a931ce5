package server

import (
	"context"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The reads the HTTP API answers with one call each, composing what a
// caller would otherwise look up in several: a job by ID or unique
// prefix, a job's summary, an evaluation's allocations and a node's.

// JobGet returns one job by ID or, when no job has that ID, by unique ID
// prefix, in the request's namespace ("*": any). No match is KindNotFound;
// an ambiguous prefix is KindInvalid, naming the jobs it matches.
func (s *Server) JobGet(ctx context.Context, req *structs.JobSpecificRequest) (*structs.SingleJobResponse, error) {
	resp := &structs.SingleJobResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableJobs)
		j, err := lookupJob(ws, st, ns, req.JobID)
		resp.Job = j
		return index, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// lookupJob returns the job with ID id in namespace ns ("*": any), or else
// the one job whose ID starts with id.
func lookupJob(ws memdb.WatchSet, st *state.StateStore, ns, id string) (*structs.Job, error) {
	if id == "" {
		return nil, structs.Invalid("missing job ID")
	}
	var matches []*structs.Job
	if ns == "*" {
		all, err := st.Jobs(ws)
		if err != nil {
			return nil, err
		}
		for _, j := range all {
			if j.ID == id {
				return j, nil
			}
			if strings.HasPrefix(j.ID, id) {
				matches = append(matches, j)
			}
		}
	} else {
		j, err := st.JobByID(ws, ns, id)
		if err != nil || j != nil {
			return j, err
		}
		if matches, err = st.JobsByIDPrefix(ws, ns, id); err != nil {
			return nil, err
		}
	}
	switch len(matches) {
	case 0:
		return nil, structs.NotFound("job", id)
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, j := range matches {
		ids[i] = j.ID
	}
	slices.Sort(ids)
	return nil, structs.Invalid("job prefix %q matches %d jobs (%s): give more of the ID", id, len(ids), strings.Join(ids, ", "))
}

// JobSummary returns a job's allocation counts per group, by exact job ID
// in the request's namespace ("*": any); an unknown job is KindNotFound.
func (s *Server) JobSummary(ctx context.Context, req *structs.JobSpecificRequest) (*structs.JobSummaryResponse, error) {
	resp := &structs.JobSummaryResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.MaxIndex(state.TableJobs, state.TableJobSummary)
		var sum *structs.JobSummary
		if ns == "*" {
			all, err := st.JobSummaries(ws)
			if err != nil {
				return index, err
			}
			for _, s := range all {
				if s.JobID == req.JobID {
					sum = s
					break
				}
			}
		} else {
			var err error
			if sum, err = st.JobSummaryByID(ws, ns, req.JobID); err != nil {
				return index, err
			}
		}
		resp.JobSummary = sum
		if sum == nil {
			return index, structs.NotFound("job", req.JobID)
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// EvalAllocations lists the allocations an evaluation (by ID or unique ID
// prefix) placed, in every namespace.
func (s *Server) EvalAllocations(ctx context.Context, req *structs.EvalSpecificRequest) (*structs.AllocListResponse, error) {
	resp := &structs.AllocListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableAllocs)
		resp.Allocations = []*structs.AllocListStub{}
		eval, err := lookupEval(ws, st, req.EvalID)
		if structs.KindOf(err) == structs.KindNotFound {
			return index, nil // as Nomad: an unknown evaluation placed nothing
		}
		if err != nil {
			return index, err
		}
		allocs, err := st.AllocsByEval(ws, eval.ID)
		if err != nil {
			return index, err
		}
		resp.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			resp.Allocations = append(resp.Allocations, a.Stub())
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NodeAllocations returns the allocations placed on a node (by ID or
// unique ID prefix), in every namespace; none for an unknown node.
func (s *Server) NodeAllocations(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.AllocsGetResponse, error) {
	resp := &structs.AllocsGetResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableAllocs)
		resp.Allocs = []*structs.Allocation{}
		node, err := lookupNode(ws, st, req.NodeID)
		if structs.KindOf(err) == structs.KindNotFound {
			return index, nil // as Nomad: an unknown node runs nothing
		}
		if err != nil {
			return index, err
		}
		allocs, err := st.AllocsByNode(ws, node.ID)
		if err != nil {
			return index, err
		}
		resp.Allocs = allocs
		if resp.Allocs == nil {
			resp.Allocs = []*structs.Allocation{}
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// AllocNode returns an allocation (by ID or unique ID prefix) with the node
// it is placed on, nil when it is not placed or the node is gone: where an
// agent forwards a request about the allocation.
func (s *Server) AllocNode(ctx context.Context, req *structs.AllocSpecificRequest) (*structs.AllocNodeResponse, error) {
	resp := &structs.AllocNodeResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.MaxIndex(state.TableAllocs, state.TableNodes)
		a, err := lookupAlloc(ws, st, req.AllocID)
		if err != nil {
			return index, err
		}
		resp.Alloc, resp.Node = a, nil
		if a.NodeID != "" {
			if resp.Node, err = st.NodeByID(ws, a.NodeID); err != nil {
				return index, err
			}
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
