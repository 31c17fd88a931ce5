package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// DeploymentList lists deployments newest first: a job's with JobID (an
// unknown job is KindNotFound), else all of the namespace ("*": every
// namespace) whose ID starts with Prefix.
func (s *Server) DeploymentList(ctx context.Context, req *structs.DeploymentListRequest) (*structs.DeploymentListResponse, error) {
	resp := &structs.DeploymentListResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var ds []*structs.Deployment
		var err error
		if req.JobID != "" {
			if err := jobExists(ws, st, ns, req.JobID); err != nil {
				return st.Index(state.TableDeployment), err
			}
			ds, err = st.DeploymentsByJob(ws, ns, req.JobID)
		} else {
			ds, err = st.Deployments(ws)
		}
		if err != nil {
			return 0, err
		}
		resp.Deployments = make([]*structs.Deployment, 0, len(ds))
		for _, d := range ds {
			if (ns == "*" || d.Namespace == ns) && hasPrefix(d.ID, req.Prefix) {
				resp.Deployments = append(resp.Deployments, d)
			}
		}
		return st.Index(state.TableDeployment), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// DeploymentGet returns one deployment by ID or unique ID prefix, or with
// JobID the job's latest (nil when it never had one). An unknown ID or
// job is KindNotFound.
func (s *Server) DeploymentGet(ctx context.Context, req *structs.DeploymentSpecificRequest) (*structs.SingleDeploymentResponse, error) {
	resp := &structs.SingleDeploymentResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableDeployment)
		if req.JobID != "" {
			if err := jobExists(ws, st, ns, req.JobID); err != nil {
				return index, err
			}
			d, err := st.LatestDeploymentByJob(ws, ns, req.JobID)
			resp.Deployment = d
			return index, err
		}
		d, err := lookupDeployment(ws, st, req.DeploymentID)
		resp.Deployment = d
		return index, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// lookupDeployment returns the deployment of this ID or unique ID prefix;
// KindNotFound when there is none.
func lookupDeployment(ws memdb.WatchSet, st *state.StateStore, id string) (*structs.Deployment, error) {
	d, err := st.DeploymentByID(ws, id)
	if err != nil {
		return nil, err
	}
	if d == nil && id != "" {
		matches, err := st.DeploymentsByIDPrefix(ws, id)
		if err != nil {
			return nil, err
		}
		switch len(matches) {
		case 1:
			d = matches[0]
		case 0:
		default:
			return nil, structs.Invalid("deployment prefix %q matches %d deployments: give more of the ID", id, len(matches))
		}
	}
	if d == nil {
		return nil, structs.NotFound("deployment", id)
	}
	return d, nil
}

// DeploymentAllocations lists the allocations of a deployment (by ID or
// unique ID prefix): those of its job that it placed. An unknown
// deployment has none, as in Nomad.
func (s *Server) DeploymentAllocations(ctx context.Context, req *structs.DeploymentSpecificRequest) (*structs.AllocListResponse, error) {
	resp := &structs.AllocListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableAllocs)
		resp.Allocations = []*structs.AllocListStub{}
		d, err := lookupDeployment(ws, st, req.DeploymentID)
		if structs.KindOf(err) == structs.KindNotFound {
			return index, nil
		}
		if err != nil {
			return index, err
		}
		allocs, err := st.AllocsByJob(ws, d.Namespace, d.JobID)
		if err != nil {
			return index, err
		}
		for _, a := range allocs {
			if a.DeploymentID == d.ID {
				resp.Allocations = append(resp.Allocations, a.Stub())
			}
		}
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// jobExists returns KindNotFound unless the job with exactly this ID exists.
func jobExists(ws memdb.WatchSet, st *state.StateStore, ns, id string) error {
	j, err := st.JobByID(ws, ns, id)
	if err != nil {
		return err
	}
	if j == nil {
		return structs.NotFound("job", id)
	}
	return nil
}
