package server

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// Every call of a server's methods, in process or over the wire, goes
// through route (the Handlers' middleware): the leader serves writes and
// reads; another server forwards them to the leader with the same rpcapi
// descriptor, and the leader's answer (its error kind included) is the
// caller's. A read with AllowStale (?stale) is served by whichever server
// receives it, from its own state; a method rpcapi declares Local (what a
// server sees of the cluster) by the server called.
//
// A deduplicated write gets its request ID before the first attempt, so
// that sending it again after a leader change (the old leader died after
// committing it, before answering) applies it once. While no leader is
// known, a call waits for one up to the hold timeout.

// forwardBackoff bounds the pause between attempts while the leader is
// unreachable but not yet replaced.
const (
	forwardBackoffMin = 50 * time.Millisecond
	forwardBackoffMax = time.Second
)

// route serves a call, or forwards it to the leader (rpcapi.Middleware).
func (s *Server) route(ctx context.Context, m *rpcapi.Info, req any, serve func(context.Context, any) (any, error)) (any, error) {
	if m.Local() {
		return serve(ctx, req)
	}
	if q := m.Query(req); q != nil && q.AllowStale {
		return serve(ctx, req)
	}
	req, _ = m.WithRequestID(req)
	hold, cancel := context.WithTimeout(ctx, s.holdTimeout())
	defer cancel()
	backoff := forwardBackoffMin
	var lastErr error
	for {
		changed := s.leaderNotify.wait()
		addr, self := s.leaderRPC()
		switch {
		case s.leader():
			resp, err := serve(ctx, req)
			if err == nil || s.leader() || !m.Class().SafeToRepeat() || structs.KindOf(err) != structs.KindUnavailable {
				return resp, err
			}
			lastErr = err // leadership lost during the call: find the new leader
		case rpcapi.Forwarded(ctx):
			// Another server took this one for the leader: let it find
			// the real one rather than bounce the call between servers.
			return nil, structs.NewError(structs.KindUnavailable, "server %s is not the leader (it was forwarded a %s call)", s.config.NodeName, m.Name())
		case addr != "" && !self && s.cluster != nil:
			resp, err := s.forward(ctx, addr, m, req)
			if err == nil || !rpcapi.MayRetry(m, err) {
				return resp, forwardError(m, err)
			}
			lastErr = err
		}
		// No leader, a leader not yet ready, or one that did not answer:
		// wait for a change (or a moment), within the hold timeout.
		t := time.NewTimer(backoff)
		select {
		case <-changed:
		case <-t.C:
			backoff = min(2*backoff, forwardBackoffMax)
		case <-hold.Done():
			t.Stop()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if lastErr == nil {
				lastErr = errors.New("no leader elected")
			}
			return nil, structs.NewError(structs.KindUnavailable, "no cluster leader after %s: %v", s.holdTimeout(), lastErr)
		}
		t.Stop()
	}
}

// forwardError turns a failure to get the leader's answer to a call that
// must not be sent twice into an unavailable error that says so.
func forwardError(m *rpcapi.Info, err error) error {
	var te *rpcapi.TransportError
	if err != nil && errors.As(err, &te) {
		return structs.NewError(structs.KindUnavailable, "%v: the leader may have applied it; check before sending it again", err)
	}
	return err
}

// forward sends a call to the leader at addr.
func (s *Server) forward(ctx context.Context, addr string, m *rpcapi.Info, req any) (any, error) {
	ctx = s.serverSecretContext(ctx, m)
	return serverConn{wire: s.cluster.wire, addr: addr}.Invoke(rpcapi.WithForwarded(ctx), m, req)
}

// holdTimeout is how long a call waits for a leader.
func (s *Server) holdTimeout() time.Duration {
	if s.config.Cluster != nil {
		return s.config.Cluster.HoldTimeout
	}
	return DefaultHoldTimeout
}

// leaderRPC returns the leader's RPC address ("" when there is none) and
// whether it is this server.
func (s *Server) leaderRPC() (string, bool) {
	addr, id := s.raft.LeaderWithID()
	if id == "" {
		return "", false
	}
	return s.rpcAddrOf(id, addr), id == s.raftID()
}

// rpcAddrOf returns the RPC address of the server with raft ID id: the one
// serf knows now, else its raft address (the same port).
func (s *Server) rpcAddrOf(id raft.ServerID, addr raft.ServerAddress) string {
	if id == s.raftID() && s.cluster != nil {
		return s.cluster.rpcAdvertise
	}
	for _, m := range s.members() {
		if m.ID == string(id) {
			return m.RPCAddr
		}
	}
	return string(addr)
}

// knownLeader reports whether a leader is known.
func (s *Server) knownLeader() bool {
	_, id := s.raft.LeaderWithID()
	return id != ""
}

// KnownLeader reports whether the server knows a leader.
func (s *Server) KnownLeader() bool { return s.knownLeader() }

// LastContact is how long ago the server last heard from the leader (0 on
// the leader).
func (s *Server) LastContact() time.Duration { return s.lastContact() }

// lastContact is how long ago this server last heard from the leader: 0 on
// the leader.
func (s *Server) lastContact() time.Duration {
	if s.leader() {
		return 0
	}
	last := s.raft.LastContact()
	if last.IsZero() {
		return 0
	}
	return s.clock.Now().Sub(last)
}

// setMeta fills the leader fields of a read's answer.
func (s *Server) setMeta(m *structs.QueryMeta) {
	m.KnownLeader = s.knownLeader()
	m.LastContact = s.lastContact()
	if m.Index == 0 {
		m.Index = max(s.fsm.State().LatestIndex(), 1)
	}
}
