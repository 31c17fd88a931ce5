package server

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// heartbeats keeps one timer per node, running for the TTL the node was
// given plus the grace. A timer that fires records its node as expired;
// the server's expiry loop then marks the node down.
type heartbeats struct {
	clock   Clock
	grace   time.Duration
	notifyC chan struct{} // signalled (non-blocking) when expired grows

	mu      sync.Mutex // guards the fields below
	timers  map[string]Timer
	expired map[string]bool
}

func newHeartbeats(clock Clock, grace time.Duration) *heartbeats {
	return &heartbeats{
		clock: clock, grace: grace, notifyC: make(chan struct{}, 1),
		timers: map[string]Timer{}, expired: map[string]bool{},
	}
}

// Reset (re)starts a node's timer: it has just been heard from and told to
// come back within ttl. The timer fires after ttl plus the grace.
func (h *heartbeats) Reset(nodeID string, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.expired, nodeID)
	d := ttl + h.grace
	if t, ok := h.timers[nodeID]; ok {
		t.Reset(d)
		return
	}
	h.timers[nodeID] = h.clock.AfterFunc(d, func() { h.fire(nodeID) })
}

// scaledTTL is the heartbeat TTL for a cluster of n nodes: the minimum, or
// longer when n nodes heartbeating once per minimum TTL would exceed
// maxPerSecond heartbeats a second in total (n / maxPerSecond seconds).
// maxPerSecond <= 0 does not scale.
func scaledTTL(minTTL time.Duration, maxPerSecond float64, n int) time.Duration {
	if maxPerSecond <= 0 || n <= 0 {
		return minTTL
	}
	return max(minTTL, time.Duration(float64(n)/maxPerSecond*float64(time.Second)))
}

// heartbeatTTL is the TTL the server gives a node now: scaledTTL for the
// nodes it tracks, plus a random stagger of up to a quarter of it so that
// nodes registered together spread their heartbeats out.
func (s *Server) heartbeatTTL() time.Duration {
	ttl := scaledTTL(s.config.HeartbeatTTL, s.config.MaxHeartbeatsPerSecond, s.heartbeats.Len())
	if q := int64(ttl / 4); q > 0 {
		ttl += time.Duration(rand.Int64N(q))
	}
	return ttl
}

// Clear stops a node's timer (it is down or gone).
func (h *heartbeats) Clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
		delete(h.timers, nodeID)
	}
	delete(h.expired, nodeID)
}

func (h *heartbeats) fire(nodeID string) {
	h.mu.Lock()
	if _, ok := h.timers[nodeID]; !ok {
		h.mu.Unlock()
		return
	}
	delete(h.timers, nodeID)
	h.expired[nodeID] = true
	h.mu.Unlock()
	select {
	case h.notifyC <- struct{}{}:
	default:
	}
}

// takeExpired returns and forgets the nodes whose timers fired.
func (h *heartbeats) takeExpired() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.expired))
	for id := range h.expired {
		out = append(out, id)
	}
	h.expired = map[string]bool{}
	return out
}

// StopAll stops every timer.
func (h *heartbeats) StopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, t := range h.timers {
		t.Stop()
		delete(h.timers, id)
	}
	h.expired = map[string]bool{}
}

// Active reports whether a node's timer runs: it was heard from within
// the TTL.
func (h *heartbeats) Active(nodeID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.timers[nodeID]
	return ok
}

// Len returns the number of running timers.
func (h *heartbeats) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

// runHeartbeatExpiry marks nodes down when their heartbeat timers fire.
func (s *Server) runHeartbeatExpiry() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.heartbeats.notifyC:
		}
		for _, id := range s.heartbeats.takeExpired() {
			if !s.leader() || s.heartbeats.Active(id) {
				continue // not our duty, or heard from since the timer fired
			}
			if err := s.expireHeartbeat(id); err != nil {
				s.logger.Error("mark node down after missed heartbeat", "node_id", id, "error", err)
			}
		}
	}
}

// expireHeartbeat marks a silent node down.
func (s *Server) expireHeartbeat(nodeID string) error {
	node, err := s.fsm.State().NodeByID(nil, nodeID)
	if err != nil {
		return err
	}
	if node == nil || node.Status == structs.NodeStatusDown {
		return nil
	}
	if node.Status != structs.NodeStatusDisconnected {
		window, err := s.disconnectWindow(nodeID)
		if err != nil {
			return err
		}
		if window > 0 {
			// Allocations with a disconnect block wait for it
			// (disconnect.go); the timer fires again when the longest
			// lost_after has passed.
			s.logger.Warn("node missed its heartbeat: marking it disconnected", "node_id", nodeID, "lost_after", window)
			if _, _, err := s.setNodeStatus(node, structs.NodeStatusDisconnected); err != nil {
				return err
			}
			s.heartbeats.Reset(nodeID, max(window-s.config.HeartbeatGrace, 0))
			return nil
		}
	}
	s.logger.Warn("node missed its heartbeat: marking it down", "node_id", nodeID)
	_, _, err = s.setNodeStatus(node, structs.NodeStatusDown)
	return err
}

// setNodeStatus changes a node's status through raft. Going down marks its
// allocations lost; any change creates evaluations for the jobs it affects.
func (s *Server) setNodeStatus(node *structs.Node, status string) (uint64, []string, error) {
	now := s.clock.Now()
	cmd := &NodeStatusCommand{NodeID: node.ID, Status: status, UpdatedAt: now.Unix()}
	st := s.fsm.State()
	if status == structs.NodeStatusDown || status == structs.NodeStatusDisconnected ||
		(node.Status == structs.NodeStatusDisconnected && status == structs.NodeStatusReady) {
		allocs, err := st.AllocsByNode(nil, node.ID)
		if err != nil {
			return 0, nil, fmt.Errorf("read allocs of node %q: %w", node.ID, err)
		}
		for _, a := range allocs {
			if a.ClientTerminalStatus() {
				continue
			}
			clientStatus, desc := allocStatusOnNodeChange(a, status)
			if clientStatus == "" {
				continue
			}
			cmd.LostAllocs = append(cmd.LostAllocs, &structs.Allocation{
				ID: a.ID, NodeID: a.NodeID, ClientStatus: clientStatus, ClientDescription: desc,
				TaskStates: a.TaskStates, ModifyTime: now.UnixNano(),
			})
		}
	}
	evals, err := s.nodeEvals(node.ID, now)
	if err != nil {
		return 0, nil, err
	}
	cmd.Evals = evals
	index, _, err := s.raftApply(NodeUpdateStatusRequestType, cmd)
	if err != nil {
		return 0, nil, err
	}
	if status == structs.NodeStatusDown {
		s.heartbeats.Clear(node.ID)
	}
	return index, evalIDs(evals), nil
}
