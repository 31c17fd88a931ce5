package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// NodeEvaluate creates evaluations of the jobs a node affects (those with
// allocations on it and every system job), as Nomad's node evaluate does.
// An unknown node is KindNotFound; a node that affects no job gets no
// evaluation and the nodes' index.
func (s *Server) NodeEvaluate(ctx context.Context, req *structs.NodeEvaluateRequest) (*structs.NodeDrainUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNodeOp); ok || err != nil {
		return r, err
	}
	node, err := s.fsm.State().NodeByID(nil, req.NodeID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", req.NodeID, err)
	}
	if node == nil {
		return nil, structs.NotFound("node", req.NodeID)
	}
	evals, err := s.nodeEvals(node.ID, s.clock.Now())
	if err != nil {
		return nil, err
	}
	if len(evals) == 0 {
		idx := max(s.fsm.State().Index(state.TableNodes), 1)
		return &structs.NodeDrainUpdateResponse{NodeModifyIndex: node.ModifyIndex, EvalIDs: []string{}, WriteMeta: structs.WriteMeta{Index: idx}}, nil
	}
	return applyWrite(s, req.RequestID, ApplyPlanResultsRequestType, &PlanResultCommand{Evals: evals},
		&structs.NodeDrainUpdateResponse{NodeModifyIndex: node.ModifyIndex, EvalIDs: evalIDs(evals)}, completeNodeOp)
}

// NodePurge removes a node from the state (Nomad's node purge, for a node
// that is gone for good): in one raft entry its allocations that the
// client had not finished are marked lost, the jobs it affected get
// evaluations (which replace those allocations elsewhere) and the node is
// deleted. An unknown node is KindNotFound. A client still running on the
// purged node registers again at its next heartbeat.
func (s *Server) NodePurge(ctx context.Context, req *structs.NodePurgeRequest) (*structs.NodeDrainUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNodeOp); ok || err != nil {
		return r, err
	}
	st := s.fsm.State()
	node, err := st.NodeByID(nil, req.NodeID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", req.NodeID, err)
	}
	if node == nil {
		return nil, structs.NotFound("node", req.NodeID)
	}
	now := s.clock.Now()
	cmd := &NodeDeregisterCommand{NodeID: node.ID}
	allocs, err := st.AllocsByNode(nil, node.ID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of node %q: %w", node.ID, err)
	}
	for _, a := range allocs {
		if a.ClientTerminalStatus() {
			continue
		}
		cmd.LostAllocs = append(cmd.LostAllocs, &structs.Allocation{
			ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusLost,
			ClientDescription: "alloc is lost since its node was purged", TaskStates: a.TaskStates, ModifyTime: now.UnixNano(),
		})
	}
	if cmd.Evals, err = s.nodeEvals(node.ID, now); err != nil {
		return nil, err
	}
	resp, err := applyWrite(s, req.RequestID, NodeDeregisterRequestType, cmd,
		&structs.NodeDrainUpdateResponse{EvalIDs: evalIDs(cmd.Evals)}, completeNodePurge)
	if err != nil {
		return nil, err
	}
	s.heartbeats.Clear(node.ID)
	s.logger.Info("node purged", "node_id", node.ID, "lost_allocs", len(cmd.LostAllocs), "evals", len(cmd.Evals))
	return resp, nil
}

// completeNodeOp completes a node evaluation's reply with its index.
func completeNodeOp(r *structs.NodeDrainUpdateResponse, index uint64, _ any) {
	r.Index = index
	if len(r.EvalIDs) > 0 {
		r.EvalCreateIndex = index
	}
}

// completeNodePurge completes a purge's reply: the node was deleted at
// index.
func completeNodePurge(r *structs.NodeDrainUpdateResponse, index uint64, result any) {
	completeNodeOp(r, index, result)
	r.NodeModifyIndex = index
}
