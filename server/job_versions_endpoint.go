package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// JobVersions lists the kept versions of a job (structs.JobTrackedVersions
// at most), newest first; with Diffs, each version's difference from the
// one before it. An unknown job is KindNotFound.
func (s *Server) JobVersions(ctx context.Context, req *structs.JobVersionsRequest) (*structs.JobVersionsResponse, error) {
	resp := &structs.JobVersionsResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.MaxIndex(state.TableJobVersion, state.TableJobs)
		versions, err := st.JobVersions(ws, ns, req.JobID)
		if err != nil {
			return index, err
		}
		if len(versions) == 0 {
			return index, structs.NotFound("job", req.JobID)
		}
		resp.Versions = versions
		resp.Diffs = nil
		if req.Diffs {
			for i := 0; i+1 < len(versions); i++ {
				resp.Diffs = append(resp.Diffs, structs.DiffJobs(versions[i+1], versions[i]))
			}
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
