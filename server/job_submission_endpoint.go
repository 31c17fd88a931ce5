package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// errNoJobSource answers a version without a kept source, in Nomad's
// words (its API clients match them).
func errNoJobSource(jobID string, version uint64) error {
	return structs.NewError(structs.KindNotFound, "job source not found: job %q version %d has none (it was registered without its file, or the version is gone)", jobID, version)
}

// JobGetSubmission returns the source a version of a job was registered
// from; KindNotFound when none is kept (the job or version is unknown,
// or the version was registered without it).
func (s *Server) JobGetSubmission(ctx context.Context, req *structs.JobSubmissionRequest) (*structs.JobSubmissionResponse, error) {
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	resp := &structs.JobSubmissionResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableJobSubmissions)
		sub, err := st.JobSubmission(ws, ns, req.JobID, req.Version)
		if err != nil {
			return index, err
		}
		if sub == nil {
			return index, errNoJobSource(req.JobID, req.Version)
		}
		resp.Submission = sub
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
