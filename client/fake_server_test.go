package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeServer is an in-memory stand-in for the servers' client RPCs.
type fakeServer struct {
	ttl time.Duration

	mu           sync.Mutex
	index        uint64
	changed      chan struct{} // closed and replaced when index grows
	nodes        map[string]*structs.Node
	registers    int
	heartbeats   int
	registerErrs int // fail this many registrations first
	allocs       map[string]*structs.Allocation
	batches      [][]*structs.Allocation
	batchTimes   []time.Time   // when each of batches arrived
	updateErrs   int           // fail this many NodeUpdateAlloc calls first
	unreachable  bool          // heartbeats fail as if no server answered
	called       chan struct{} // closed and replaced after each call the client makes

	conn *rpcapi.Handlers // the methods below, set by newFakeServer
}

var _ rpcapi.Conn = (*fakeServer)(nil)

// handlers binds the client's methods to the fake.
func (s *fakeServer) handlers() *rpcapi.Handlers {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeRegister, s.NodeRegister)
	rpcapi.Handle(h, rpcapi.NodeUpdateStatus, s.NodeUpdateStatus)
	rpcapi.Handle(h, rpcapi.NodeGetClientAllocs, s.NodeGetClientAllocs)
	rpcapi.Handle(h, rpcapi.AllocGetAllocs, s.AllocGetAllocs)
	rpcapi.Handle(h, rpcapi.NodeUpdateAlloc, s.NodeUpdateAlloc)
	return h
}

// Invoke implements rpcapi.Conn; each call, answered, wakes wait.
func (s *fakeServer) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	resp, err := s.conn.Invoke(ctx, m, req)
	s.mu.Lock()
	close(s.called)
	s.called = make(chan struct{})
	s.mu.Unlock()
	return resp, err
}

// hungBound bounds a wait on an event: a test that is hung fails instead
// of blocking the package, and no test relies on the bound's length.
const hungBound = time.Minute

// wait waits until cond holds, re-checking it after each call the client
// makes to the servers (an event, not a poll): what the servers see of a
// client changes only by its calls.
func (s *fakeServer) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	bound := time.NewTimer(hungBound)
	defer bound.Stop()
	for {
		s.mu.Lock()
		called := s.called
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-called:
		case <-bound.C:
			t.Fatalf("no %s after %s", what, hungBound)
		}
	}
}

func newFakeServer() *fakeServer {
	s := &fakeServer{
		ttl:     200 * time.Millisecond,
		index:   1,
		changed: make(chan struct{}),
		called:  make(chan struct{}),
		nodes:   make(map[string]*structs.Node),
		allocs:  make(map[string]*structs.Allocation),
	}
	s.conn = s.handlers()
	return s
}

// bump advances the index and wakes blocking queries. s.mu must be held.
func (s *fakeServer) bump() uint64 {
	s.index++
	close(s.changed)
	s.changed = make(chan struct{})
	return s.index
}

func (s *fakeServer) NodeRegister(ctx context.Context, req *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registers++
	if s.registerErrs > 0 {
		s.registerErrs--
		return nil, structs.NewError(structs.KindUnavailable, "no leader")
	}
	s.nodes[req.Node.ID] = req.Node.Copy()
	return &structs.NodeUpdateResponse{HeartbeatTTL: s.ttl, WriteMeta: structs.WriteMeta{Index: s.bump()}}, nil
}

func (s *fakeServer) NodeUpdateStatus(ctx context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreachable {
		return nil, structs.NewError(structs.KindUnavailable, "no server reachable")
	}
	n, ok := s.nodes[req.NodeID]
	if !ok {
		return nil, structs.NotFound("node", req.NodeID)
	}
	if n.SecretID != req.SecretID {
		return nil, structs.Invalid("wrong secret")
	}
	s.heartbeats++
	n.Status = req.Status
	return &structs.NodeUpdateResponse{HeartbeatTTL: s.ttl}, nil
}

func (s *fakeServer) NodeGetClientAllocs(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
	wait := req.MaxQueryTime
	if wait <= 0 {
		wait = structs.DefaultBlockingWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if _, ok := s.nodes[req.NodeID]; !ok {
			s.mu.Unlock()
			return nil, structs.NotFound("node", req.NodeID)
		}
		if s.index > req.MinQueryIndex {
			resp := &structs.NodeClientAllocsResponse{Allocs: map[string]uint64{}, QueryMeta: structs.QueryMeta{Index: s.index}}
			for id, a := range s.allocs {
				if a.NodeID == req.NodeID {
					resp.Allocs[id] = a.AllocModifyIndex
				}
			}
			s.mu.Unlock()
			return resp, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return &structs.NodeClientAllocsResponse{QueryMeta: structs.QueryMeta{Index: req.MinQueryIndex}}, nil
		}
	}
}

func (s *fakeServer) AllocGetAllocs(ctx context.Context, req *structs.AllocsGetRequest) (*structs.AllocsGetResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &structs.AllocsGetResponse{QueryMeta: structs.QueryMeta{Index: s.index}}
	for _, id := range req.AllocIDs {
		if a, ok := s.allocs[id]; ok {
			resp.Allocs = append(resp.Allocs, a.Copy())
		}
	}
	return resp, nil
}

func (s *fakeServer) NodeUpdateAlloc(ctx context.Context, req *structs.AllocUpdateRequest) (*structs.GenericResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.updateErrs > 0 {
		s.updateErrs--
		return nil, structs.NewError(structs.KindUnavailable, "fake: no leader")
	}
	batch := make([]*structs.Allocation, 0, len(req.Alloc))
	for _, u := range req.Alloc {
		batch = append(batch, u.Copy())
		if a, ok := s.allocs[u.ID]; ok {
			c := a.Copy()
			c.ClientStatus, c.ClientDescription, c.TaskStates = u.ClientStatus, u.ClientDescription, u.TaskStates
			s.allocs[u.ID] = c
		}
	}
	s.batches = append(s.batches, batch)
	s.batchTimes = append(s.batchTimes, time.Now())
	return &structs.GenericResponse{}, nil
}

// putAlloc adds or replaces an allocation, as the scheduler would.
func (s *fakeServer) putAlloc(a *structs.Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := a.Copy()
	c.AllocModifyIndex = s.bump()
	s.allocs[a.ID] = c
}

// stopAlloc sets an allocation's desired status to stop.
func (s *fakeServer) stopAlloc(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.allocs[id].Copy()
	c.DesiredStatus = structs.AllocDesiredStatusStop
	c.AllocModifyIndex = s.bump()
	s.allocs[id] = c
}

// removeAlloc garbage-collects an allocation.
func (s *fakeServer) removeAlloc(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.allocs, id)
	s.bump()
}

func (s *fakeServer) forgetNodes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes = make(map[string]*structs.Node)
}

func (s *fakeServer) alloc(id string) *structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs[id].Copy()
}

// known reports whether the fake holds node id (registered since the last
// forgetNodes).
func (s *fakeServer) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.nodes[id]
	return ok
}

func (s *fakeServer) counts() (registers, heartbeats int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registers, s.heartbeats
}
