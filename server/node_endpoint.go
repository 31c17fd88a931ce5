package server

import (
	"context"
	"crypto/subtle"
	"fmt"
	"maps"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// NodeRegister registers or re-registers a client node. A node that
// becomes ready gets evaluations for the system jobs and the jobs with
// allocations on it; its heartbeat timer starts.
func (s *Server) NodeRegister(ctx context.Context, req *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.Node == nil {
		return nil, structs.Invalid("missing node")
	}
	if req.Node.ID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	node := req.Node.Copy()
	if node.Datacenter == "" {
		node.Datacenter = s.config.Datacenter
	}
	if node.Name == "" {
		node.Name = node.ID
	}
	if node.NodePool == "" {
		node.NodePool = "default"
	}
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	switch node.Status {
	case structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown:
	default:
		return nil, structs.Invalid("node status %q is invalid: use initializing, ready or down", node.Status)
	}
	now := s.clock.Now()
	node.StatusUpdatedAt = now.Unix()

	if node.SecretID == "" {
		return nil, permissionDenied("node %q registers without a secret ID", node.ID)
	}
	existing, err := s.fsm.State().NodeByID(nil, node.ID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", node.ID, err)
	}
	if existing != nil && !secretMatches(existing.SecretID, node.SecretID) {
		return nil, permissionDenied("node %q is registered with another secret ID", node.ID)
	}
	var evals []*structs.Evaluation
	if nodeNeedsEvals(existing, node) {
		if evals, err = s.nodeEvals(node.ID, now); err != nil {
			return nil, err
		}
	}
	index, _, err := s.raftApply(NodeRegisterRequestType, &NodeRegisterCommand{Node: node, Evals: evals})
	if err != nil {
		return nil, err
	}
	ttl := s.heartbeatTTL()
	if node.Status == structs.NodeStatusDown {
		s.heartbeats.Clear(node.ID)
	} else {
		s.heartbeats.Reset(node.ID, ttl)
	}
	return &structs.NodeUpdateResponse{
		HeartbeatTTL: ttl,
		EvalIDs:      evalIDs(evals),
		WriteMeta:    structs.WriteMeta{Index: index},
	}, nil
}

// nodeNeedsEvals reports whether a (re-)registration of node, stored as
// existing (nil: new), needs evaluations of the jobs it affects: a new
// node or a status change, or a ready node whose metadata changed (its
// client applied dynamic metadata: a system job constrained on
// ${meta.<key>} may now fit it, or no longer). Service and batch jobs
// that were blocked are retried by the registration's capacity change.
func nodeNeedsEvals(existing, node *structs.Node) bool {
	if existing == nil || existing.Status != node.Status {
		return true
	}
	return node.Status == structs.NodeStatusReady && !maps.Equal(existing.Meta, node.Meta)
}

// NodeUpdateStatus is a client's heartbeat. It resets the node's TTL timer
// and, when Status differs from the stored one (an empty Status keeps it),
// changes it, creating evaluations for the affected jobs.
func (s *Server) NodeUpdateStatus(ctx context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	node, err := s.authNode(req.NodeID, req.SecretID)
	if err != nil {
		return nil, err
	}
	resp := &structs.NodeUpdateResponse{HeartbeatTTL: s.heartbeatTTL()}
	status := req.Status
	switch status {
	case "", structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown:
	default:
		return nil, structs.Invalid("node status %q is invalid: use initializing, ready or down", status)
	}
	if status != "" && status != node.Status {
		index, ids, err := s.setNodeStatus(node, status)
		if err != nil {
			return nil, err
		}
		resp.Index, resp.EvalIDs = index, ids
	} else {
		resp.Index = max(s.fsm.State().Index(state.TableNodes), 1)
	}
	if status == structs.NodeStatusDown {
		s.heartbeats.Clear(node.ID)
	} else {
		s.heartbeats.Reset(node.ID, resp.HeartbeatTTL)
	}
	return resp, nil
}

// NodeGetClientAllocs returns the allocations a node should run, as alloc
// ID -> AllocModifyIndex. It blocks until they change past MinQueryIndex.
func (s *Server) NodeGetClientAllocs(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	if _, err := s.authNode(req.NodeID, req.SecretID); err != nil {
		return nil, err
	}
	resp := &structs.NodeClientAllocsResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByNode(ws, req.NodeID)
		if err != nil {
			return 0, err
		}
		m := make(map[string]uint64, len(allocs))
		var index uint64
		for _, a := range allocs {
			m[a.ID] = a.AllocModifyIndex
			index = max(index, a.ModifyIndex)
		}
		if index == 0 {
			index = st.Index(state.TableAllocs)
		}
		resp.Allocs = m
		return index, nil
	})
	if err != nil {
		return nil, err
	}
	// Never 0 to a client: it blocks on the index it gets, and a query on
	// 0 would not block (as Nomad answers its clients).
	resp.Index = max(resp.Index, 1)
	return resp, nil
}

// AllocGetAllocs returns full allocations by ID (unknown IDs are skipped),
// in the order asked. It blocks until the allocations table passes
// MinQueryIndex.
func (s *Server) AllocGetAllocs(ctx context.Context, req *structs.AllocsGetRequest) (*structs.AllocsGetResponse, error) {
	if req == nil {
		return nil, structs.Invalid("missing request")
	}
	resp := &structs.AllocsGetResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		resp.Allocs = make([]*structs.Allocation, 0, len(req.AllocIDs))
		for _, id := range req.AllocIDs {
			a, err := st.AllocByID(ws, id)
			if err != nil {
				return 0, err
			}
			if a != nil {
				resp.Allocs = append(resp.Allocs, a)
			}
		}
		return st.Index(state.TableAllocs), nil
	})
	if err != nil {
		return nil, err
	}
	resp.Index = max(resp.Index, 1) // never 0 to a client, as NodeGetClientAllocs
	return resp, nil
}

// NodeUpdateAlloc applies a client's allocation updates: client status,
// description and task states. Allocations the server no longer knows are
// skipped; one placed on another node fails the whole request with
// KindPermission: a node reports only on its own allocations.
func (s *Server) NodeUpdateAlloc(ctx context.Context, req *structs.AllocUpdateRequest) (*structs.GenericResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	if _, err := s.authNode(req.NodeID, req.SecretID); err != nil {
		return nil, err
	}
	st := s.fsm.State()
	now := s.clock.Now().UnixNano()
	var updates []*structs.Allocation
	for _, u := range req.Alloc {
		if u == nil {
			continue
		}
		existing, err := st.AllocByID(nil, u.ID)
		if err != nil {
			return nil, fmt.Errorf("read alloc %q: %w", u.ID, err)
		}
		if existing == nil {
			continue
		}
		if existing.NodeID != req.NodeID {
			return nil, permissionDenied("node %q may not update alloc %q: it is placed on another node", req.NodeID, u.ID)
		}
		updates = append(updates, &structs.Allocation{
			ID: u.ID, NodeID: req.NodeID, ClientStatus: u.ClientStatus,
			ClientDescription: u.ClientDescription, TaskStates: u.TaskStates,
			// The deployment the verdict is for: the state store
			// drops one that is not the alloc's (state/allocs.go).
			DeploymentID:     u.DeploymentID,
			DeploymentStatus: u.DeploymentStatus.Copy(), NetworkStatus: u.NetworkStatus.Copy(), ModifyTime: now,
		})
	}
	if len(updates) == 0 {
		return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: max(st.Index(state.TableAllocs), 1)}}, nil
	}
	evals, err := s.healthEvals(st, updates) // deployment_watcher.go
	if err != nil {
		return nil, err
	}
	failEvals, err := s.failureEvals(st, updates, evals) // reschedule.go
	if err != nil {
		return nil, err
	}
	evals = append(evals, failEvals...)
	index, _, err := s.raftApply(AllocClientUpdateRequestType, &AllocClientUpdateCommand{Allocs: updates, Evals: evals})
	if err != nil {
		return nil, err
	}
	s.markClientApplied(updates, s.clock.Now())
	return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: index}}, nil
}

// NodeList lists nodes, filtered by ID prefix.
func (s *Server) NodeList(ctx context.Context, req *structs.NodeListRequest) (*structs.NodeListResponse, error) {
	resp := &structs.NodeListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		nodes, err := st.NodesByIDPrefix(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Nodes = make([]*structs.NodeListStub, 0, len(nodes))
		for _, n := range nodes {
			stub := n.Stub()
			if req.Resources {
				stub.NodeResources, stub.ReservedResources = n.NodeResources, n.ReservedResources
			}
			resp.Nodes = append(resp.Nodes, stub)
		}
		resp.Nodes = paginate(resp.Nodes, func(n *structs.NodeListStub) string { return n.ID }, &req.QueryOptions, &resp.QueryMeta)
		return st.Index(state.TableNodes), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NodeGet returns one node by ID or unique ID prefix, without its secret
// ID: anyone who reaches the API or the RPC port may call it.
func (s *Server) NodeGet(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	resp := &structs.SingleNodeResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		index := st.Index(state.TableNodes)
		n, err := lookupNode(ws, st, req.NodeID)
		resp.Node = withoutSecret(n)
		return index, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// authNode returns a registered node after checking the caller's secret
// ID against the one the node registered with. A missing secret on either
// side is refused: the check never fails open.
func (s *Server) authNode(nodeID, secretID string) (*structs.Node, error) {
	if secretID == "" {
		return nil, permissionDenied("node %q: the call carries no secret ID", nodeID)
	}
	node, err := s.fsm.State().NodeByID(nil, nodeID)
	if err != nil {
		return nil, fmt.Errorf("read node %q: %w", nodeID, err)
	}
	if node == nil {
		return nil, structs.NotFound("node", nodeID)
	}
	if !secretMatches(node.SecretID, secretID) {
		return nil, permissionDenied("node %q: secret ID does not match", nodeID)
	}
	return node, nil
}

// secretMatches compares a stored secret with a presented one in constant
// time; an empty stored secret matches nothing.
func secretMatches(stored, presented string) bool {
	return stored != "" && subtle.ConstantTimeCompare([]byte(stored), []byte(presented)) == 1
}

// permissionDenied returns a KindPermission error; its text starts as
// Nomad's does, so that scripts matching it keep working.
func permissionDenied(format string, args ...any) error {
	return structs.NewError(structs.KindPermission, "Permission denied: "+format, args...)
}

// withoutSecret returns n, or a copy of it without its secret ID when it
// has one. n is read-only.
func withoutSecret(n *structs.Node) *structs.Node {
	if n == nil || n.SecretID == "" {
		return n
	}
	c := *n
	c.SecretID = ""
	return &c
}

// nodeEvals returns node-update evaluations for the jobs a node's change
// affects: those with allocations on it and every system job.
func (s *Server) nodeEvals(nodeID string, now time.Time) ([]*structs.Evaluation, error) {
	st := s.fsm.State()
	jobs := map[structs.NamespacedID]*structs.Job{}
	allocs, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		return nil, fmt.Errorf("read allocs of node %q: %w", nodeID, err)
	}
	for _, a := range allocs {
		key := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
		if _, ok := jobs[key]; ok {
			continue
		}
		j, err := st.JobByID(nil, a.Namespace, a.JobID)
		if err != nil {
			return nil, fmt.Errorf("read job %q: %w", a.JobID, err)
		}
		if j != nil {
			jobs[key] = j
		}
	}
	all, err := st.Jobs(nil)
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	for _, j := range all {
		if (j.Type == structs.JobTypeSystem || j.Type == structs.JobTypeSysBatch) && !j.Stop && !j.IsTemplate() {
			jobs[j.NamespacedID()] = j
		}
	}
	keys := make([]structs.NamespacedID, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, k int) bool { return keys[i].String() < keys[k].String() })
	evals := make([]*structs.Evaluation, 0, len(keys))
	for _, k := range keys {
		j := jobs[k]
		evals = append(evals, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      j.Namespace,
			Priority:       j.Priority,
			Type:           j.Type,
			TriggeredBy:    structs.EvalTriggerNodeUpdate,
			JobID:          j.ID,
			JobModifyIndex: j.JobModifyIndex,
			NodeID:         nodeID,
			Status:         structs.EvalStatusPending,
			CreateTime:     now.UnixNano(),
			ModifyTime:     now.UnixNano(),
		})
	}
	return evals, nil
}

func evalIDs(evals []*structs.Evaluation) []string {
	ids := make([]string, len(evals))
	for i, e := range evals {
		ids[i] = e.ID
	}
	return ids
}
