package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// NodePoolList lists the node pools (Prefix filters by name), the
// built-in ones and those nodes are in included, by name.
func (s *Server) NodePoolList(ctx context.Context, req *structs.NodePoolListRequest) (*structs.NodePoolListResponse, error) {
	resp := &structs.NodePoolListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		pools, err := st.NodePools(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.NodePools = paginate(pools, func(p *structs.NodePool) string { return p.Name }, &req.QueryOptions, &resp.QueryMeta)
		return max(st.Index(state.TableNodePools), st.Index(state.TableNodes), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NodePoolGet reads one node pool by name; an unknown one is
// KindNotFound.
func (s *Server) NodePoolGet(ctx context.Context, req *structs.NodePoolSpecificRequest) (*structs.SingleNodePoolResponse, error) {
	if req.Name == "" {
		return nil, structs.Invalid("missing node pool name")
	}
	resp := &structs.SingleNodePoolResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		p, err := st.NodePoolByName(ws, req.Name)
		if err != nil {
			return 0, err
		}
		resp.NodePool = p
		if p == nil {
			return max(st.Index(state.TableNodePools), 1), structs.NotFound("node pool", req.Name)
		}
		return p.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NodePoolUpsert creates or updates node pools, each checked first
// (structs.NodePool.Validate: the built-in ones cannot be written).
func (s *Server) NodePoolUpsert(ctx context.Context, req *structs.NodePoolUpsertRequest) (*structs.NodePoolWriteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.NodePools) == 0 {
		return nil, structs.Invalid("no node pool to create or update")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNodePoolWrite); ok || err != nil {
		return r, err
	}
	cmd := &NodePoolUpsertCommand{NodePools: make([]*structs.NodePool, 0, len(req.NodePools))}
	for _, p := range req.NodePools {
		if p == nil {
			return nil, structs.Invalid("a node pool of the request is empty")
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
		c := p.Copy()
		c.CreateIndex, c.ModifyIndex = 0, 0
		cmd.NodePools = append(cmd.NodePools, c)
	}
	return applyWrite(s, req.RequestID, NodePoolUpsertRequestType, cmd, &structs.NodePoolWriteResponse{}, completeNodePoolWrite)
}

// NodePoolDelete deletes node pools: none when one of them is not stored,
// is built in, or holds a node or a job that is not dead (the FSM checks
// again).
func (s *Server) NodePoolDelete(ctx context.Context, req *structs.NodePoolDeleteRequest) (*structs.NodePoolWriteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Names) == 0 {
		return nil, structs.Invalid("no node pool to delete")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNodePoolWrite); ok || err != nil {
		return r, err
	}
	for _, name := range req.Names {
		if err := s.fsm.State().CanDeleteNodePool(name); err != nil {
			return nil, err
		}
	}
	return applyWrite(s, req.RequestID, NodePoolDeleteRequestType, &NodePoolDeleteCommand{Names: req.Names},
		&structs.NodePoolWriteResponse{}, completeNodePoolWrite)
}

// completeNodePoolWrite completes a node pool write's reply with its index.
func completeNodePoolWrite(r *structs.NodePoolWriteResponse, index uint64, _ any) { r.Index = index }

// checkJobNodePool refuses a job whose node pool does not exist.
func (s *Server) checkJobNodePool(job *structs.Job) error {
	if job.NodePool == "" {
		return nil
	}
	p, err := s.fsm.State().NodePoolByName(nil, job.NodePool)
	if err != nil {
		return err
	}
	if p == nil {
		return structs.Invalid("job %q is in node pool %q, which does not exist: create it (drover node pool apply) or start a client in it", job.ID, job.NodePool)
	}
	return nil
}
