package server

import (
	"context"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// Template restart leases: a client takes one before it restarts a task
// because a template re-rendered, and gives it back once the task has run
// again for the group's min_healthy_time, so that a variable or service
// that every allocation of a job reads does not restart them all at once:
// a group holds at most its update.max_parallel leases. The table lives in
// the leader's memory, not in raft: a lease is worth seconds, and a new
// leader starting with an empty table lets at most one more batch restart
// early. A lease expires after its TTL (the group's healthy_deadline), and
// one held by an allocation that stopped is dropped, so a client that died
// holds nothing for long. See docs/decisions.md.

const (
	// restartLeaseRetry is how long a client denied a lease waits before
	// asking again.
	restartLeaseRetry = 2 * time.Second
	// restartLeaseMinTTL bounds a lease's TTL from below, beyond the
	// group's min_healthy_time: the restart itself takes time.
	restartLeaseMinTTL = time.Minute
)

// leaseGroup names a job's group in the lease table.
type leaseGroup struct{ namespace, job, group string }

// restartLeases is the leader's table of template restart leases.
type restartLeases struct {
	mu     sync.Mutex                          // guards groups
	groups map[leaseGroup]map[string]time.Time // alloc ID -> expiry
}

// acquire grants allocID a lease of g until now+ttl when it holds one
// already (renewed) or fewer than limit others do; leases expired at now,
// and those of allocations alive says no longer run, are dropped first.
// It returns whether it granted one and how many others hold one.
func (l *restartLeases) acquire(g leaseGroup, allocID string, limit int, ttl time.Duration, now time.Time, alive func(allocID string) bool) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	holders := l.groups[g]
	for id, exp := range holders {
		if !now.Before(exp) || (id != allocID && !alive(id)) {
			delete(holders, id)
		}
	}
	others := len(holders)
	if _, held := holders[allocID]; held {
		others--
	} else if others >= limit {
		return false, others
	}
	if holders == nil {
		if l.groups == nil {
			l.groups = map[leaseGroup]map[string]time.Time{}
		}
		holders = map[string]time.Time{}
		l.groups[g] = holders
	}
	holders[allocID] = now.Add(ttl)
	return true, others
}

// release gives allocID's lease of g back, if it holds one.
func (l *restartLeases) release(g leaseGroup, allocID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.groups[g], allocID)
	if len(l.groups[g]) == 0 {
		delete(l.groups, g)
	}
}

// restartLeaseLimit returns how many of a's group may restart at once
// after a template re-render (its update.max_parallel) and the TTL of
// a lease; 0 when the group needs no lease (not a service job, no rolling
// update strategy).
func restartLeaseLimit(a *structs.Allocation) (int, time.Duration) {
	if a.Job == nil || a.Job.Type != structs.JobTypeService {
		return 0, 0
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.Update == nil || tg.Update.MaxParallel <= 0 {
		return 0, 0
	}
	ttl := max(tg.Update.HealthyDeadline, tg.Update.MinHealthyTime+restartLeaseMinTTL)
	return tg.Update.MaxParallel, ttl
}

// AllocRestartLease takes or gives back the template restart lease of an
// allocation placed on the calling node.
func (s *Server) AllocRestartLease(ctx context.Context, req *structs.AllocRestartLeaseRequest) (*structs.AllocRestartLeaseResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" || req.AllocID == "" {
		return nil, structs.Invalid("restart lease: the node ID and the alloc ID are required")
	}
	if _, err := s.authNode(req.NodeID, req.SecretID); err != nil {
		return nil, err
	}
	st := s.fsm.State()
	a, err := st.AllocByID(nil, req.AllocID)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, structs.NotFound("alloc", req.AllocID)
	}
	if a.NodeID != req.NodeID {
		return nil, permissionDenied("node %q may not take a restart lease of alloc %q: it is placed on another node", req.NodeID, a.ID)
	}
	g := leaseGroup{namespace: a.Namespace, job: a.JobID, group: a.TaskGroup}
	if req.Release {
		s.restartLeases.release(g, a.ID)
		return &structs.AllocRestartLeaseResponse{Granted: true}, nil
	}
	limit, ttl := restartLeaseLimit(a)
	if limit == 0 {
		return &structs.AllocRestartLeaseResponse{Granted: true}, nil
	}
	alive := func(id string) bool {
		other, err := st.AllocByID(nil, id)
		return err == nil && other != nil && !other.TerminalStatus()
	}
	granted, others := s.restartLeases.acquire(g, a.ID, limit, ttl, s.clock.Now(), alive)
	resp := &structs.AllocRestartLeaseResponse{Granted: granted, Holders: others, Limit: limit}
	if granted {
		resp.TTL = ttl
	} else {
		resp.RetryIn = restartLeaseRetry
	}
	return resp, nil
}
