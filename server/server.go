package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/timeline"
)

// leaderProgressInterval is how often NewServer logs that it still waits
// for leadership.
const leaderProgressInterval = 5 * time.Second

// Server is a Drover server: raft, state, eval broker, workers, plan
// applier and heartbeat timers. Its methods are safe for concurrent use.
type Server struct {
	config Config
	logger *slog.Logger
	clock  Clock

	fsm           *FSM
	raft          *raft.Raft
	raftTransport raft.Transport
	ownTransport  bool
	leaderCh      chan bool // raft's leadership notifications

	broker     *evalBroker
	blocked    *blockedEvals
	heartbeats *heartbeats
	planQueue  chan *pendingPlan
	handlers   *rpcapi.Handlers // every rpcapi method, bound to this server (rpc_api.go)
	keyring    *keyring.Keyring // the root keys, unwrapped (keyring_endpoint.go)
	varLocks   *varLocks        // the leader's variable lock timers (variable_locks.go)
	// timeline records when evaluations and allocations reach the
	// servers' steps of their way to running (timeline.go).
	timeline *timeline.Recorder

	ctx          context.Context // cancelled by Shutdown; stops every goroutine below
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	shutdownOnce sync.Once
	shutdownErr  error
	established  chan struct{} // closed once leadership was first established

	leaderMu sync.Mutex // guards isLeader
	isLeader bool
}

// NewServer starts a server: raft (bootstrapped as a single voter when its
// stores are empty), the leader monitor, the eval workers, the plan applier
// and the heartbeat loop. It returns once this server leads the cluster,
// however long that takes (a loaded machine, a long log to replay),
// logging its progress every few seconds. ctx bounds only that wait: when
// it is done first, NewServer shuts down what it started and returns a
// KindUnavailable error.
func NewServer(ctx context.Context, cfg *Config) (*Server, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	c := cfg.withDefaults()
	sctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		config:      c,
		logger:      c.Logger.With("server", c.NodeName),
		clock:       c.Clock,
		leaderCh:    make(chan bool, 16),
		planQueue:   make(chan *pendingPlan),
		ctx:         sctx,
		cancel:      cancel,
		established: make(chan struct{}),
	}
	s.timeline = timeline.New(0, c.Clock.Now)
	s.broker = newEvalBroker(c.Clock)
	s.broker.timeline = s.timeline
	s.blocked = newBlockedEvals(s.broker.Enqueue)
	s.heartbeats = newHeartbeats(c.Clock, c.HeartbeatTTL)
	s.varLocks = newVarLocks(c.Clock)
	s.handlers = s.newHandlers()
	kek := c.KEK
	if kek == nil {
		var err error
		if kek, err = keyring.GenerateKEK(); err != nil {
			cancel()
			return nil, err
		}
	}
	s.keyring = keyring.New(kek)
	fsm, err := newFSM(s.logger, s)
	if err != nil {
		cancel()
		return nil, err
	}
	s.fsm = fsm
	s.ownTransport = c.Transport == nil
	if err := s.setupRaftWithNotify(); err != nil {
		cancel()
		return nil, err
	}

	s.wg.Add(5 + c.NumWorkers)
	go func() { defer s.wg.Done(); s.monitorLeadership() }()
	go func() { defer s.wg.Done(); s.runVarLockExpiry() }()
	go func() { defer s.wg.Done(); s.runPlanApplier() }()
	go func() { defer s.wg.Done(); s.runHeartbeatExpiry() }()
	go func() { defer s.wg.Done(); s.runProgressDeadlines() }()
	for i := range c.NumWorkers {
		go func() { defer s.wg.Done(); s.runWorker(i) }()
	}

	if err := s.waitForLeadership(ctx); err != nil {
		if serr := s.Shutdown(); serr != nil {
			err = errors.Join(err, serr)
		}
		return nil, err
	}
	return s, nil
}

// waitForLeadership waits until this server has established leadership,
// logging every leaderProgressInterval, or until ctx is done.
func (s *Server) waitForLeadership(ctx context.Context) error {
	start := s.clock.Now()
	tick := make(chan struct{}, 1)
	arm := func() Timer {
		return s.clock.AfterFunc(leaderProgressInterval, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	timer := arm()
	defer func() { timer.Stop() }()
	for {
		select {
		case <-s.established:
			return nil
		case <-ctx.Done():
			return structs.NewError(structs.KindUnavailable, "server stopped waiting to become raft leader after %s: %v",
				s.clock.Now().Sub(start), context.Cause(ctx))
		case <-tick:
			s.logger.Info("waiting to become raft leader", "waited", s.clock.Now().Sub(start).String(),
				"raft_state", s.raft.State().String(), "raft_last_index", s.raft.LastIndex(), "raft_applied", s.raft.AppliedIndex())
			timer = arm()
		}
	}
}

// setupRaftWithNotify starts raft with leadership notifications on leaderCh.
func (s *Server) setupRaftWithNotify() error {
	var rc raft.Config
	if s.config.RaftConfig != nil {
		rc = *s.config.RaftConfig
	} else {
		rc = *raft.DefaultConfig()
		rc.HeartbeatTimeout = 200 * time.Millisecond
		rc.ElectionTimeout = 200 * time.Millisecond
		rc.LeaderLeaseTimeout = 100 * time.Millisecond
		rc.CommitTimeout = 5 * time.Millisecond
	}
	rc.NotifyCh = s.leaderCh
	s.config.RaftConfig = &rc
	return s.setupRaft()
}

// Shutdown stops every goroutine the server started and raft. It is
// idempotent.
func (s *Server) Shutdown() error {
	s.shutdownOnce.Do(func() {
		s.cancel()
		s.heartbeats.StopAll()
		s.varLocks.stopAll()
		// Wait for our goroutines before stopping raft: one may be in
		// raft.Apply, and a command raft committed but had not yet handed
		// to the FSM when it shut down never gets its future answered, so
		// the wait would hang (seen in TestJobVersionsAndRevert's Shutdown).
		// Every loop returns on s.ctx, and a live raft answers every Apply.
		s.wg.Wait()
		if s.raft != nil {
			if err := s.raft.Shutdown().Error(); err != nil {
				s.shutdownErr = fmt.Errorf("shut down raft: %w", err)
			}
		}
		if c, ok := s.raftTransport.(io.Closer); ok && s.ownTransport {
			_ = c.Close()
		}
		s.broker.SetEnabled(false)
		s.blocked.SetEnabled(false)
	})
	return s.shutdownErr
}

// Leader returns the raft address of the leader, "" when there is none.
func (s *Server) Leader() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// Peers returns the raft addresses of the cluster's servers.
func (s *Server) Peers() []string {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var out []string
	for _, srv := range f.Configuration().Servers {
		out = append(out, string(srv.Address))
	}
	return out
}

// Stats returns operational counters: raft state and indexes, broker and
// blocked-eval counts, number of nodes and jobs.
func (s *Server) Stats() map[string]string {
	st := s.fsm.State()
	bs := s.broker.Stats()
	out := map[string]string{
		"node_name":        s.config.NodeName,
		"region":           s.config.Region,
		"datacenter":       s.config.Datacenter,
		"leader":           strconv.FormatBool(s.leader()),
		"leader_addr":      s.Leader(),
		"raft_state":       s.raft.State().String(),
		"raft_last_index":  strconv.FormatUint(s.raft.LastIndex(), 10),
		"raft_applied":     strconv.FormatUint(s.raft.AppliedIndex(), 10),
		"state_index":      strconv.FormatUint(st.LatestIndex(), 10),
		"broker_ready":     strconv.Itoa(bs.Ready),
		"broker_waiting":   strconv.Itoa(bs.Waiting),
		"broker_in_flight": strconv.Itoa(bs.InFlight),
		"broker_delayed":   strconv.Itoa(bs.Delayed),
		"blocked_evals":    strconv.Itoa(s.blocked.Len()),
		"num_workers":      strconv.Itoa(s.config.NumWorkers),
		"heartbeat_timers": strconv.Itoa(s.heartbeats.Len()),
	}
	if nodes, err := st.Nodes(nil); err == nil {
		out["nodes"] = strconv.Itoa(len(nodes))
	}
	if jobs, err := st.Jobs(nil); err == nil {
		out["jobs"] = strconv.Itoa(len(jobs))
	}
	return out
}

// State returns the server's current state store, for tests and the agent.
// Objects read from it are read-only; it changes when raft restores a
// snapshot.
func (s *Server) State() *state.StateStore { return s.fsm.State() }

func (s *Server) leader() bool {
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	return s.isLeader
}

// monitorLeadership enables the leader's duties when raft elects this
// server and disables them when it loses leadership.
func (s *Server) monitorLeadership() {
	if s.raft.State() == raft.Leader {
		s.establishLeadership()
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case isLeader := <-s.leaderCh:
			if isLeader {
				s.establishLeadership()
			} else {
				s.revokeLeadership()
			}
		}
	}
}

func (s *Server) establishLeadership() {
	if s.leader() {
		return
	}
	if err := s.raft.Barrier(raftApplyTimeout).Error(); err != nil {
		s.logger.Error("raft barrier on leadership", "error", err)
		return
	}
	s.broker.SetEnabled(true)
	s.blocked.SetEnabled(true)
	st := s.fsm.State()
	evals, err := st.Evals(nil)
	if err != nil {
		s.logger.Error("restore evaluations", "error", err)
	}
	for _, e := range evals {
		switch e.Status {
		case structs.EvalStatusPending:
			s.broker.Enqueue(e)
		case structs.EvalStatusBlocked:
			s.blocked.Block(e)
		}
	}
	nodes, err := st.Nodes(nil)
	if err != nil {
		s.logger.Error("restore heartbeat timers", "error", err)
	}
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown {
			s.heartbeats.Reset(n.ID)
		}
	}
	if err := s.bootstrapRootKey(); err != nil {
		s.logger.Error("make the keyring's first root key", "error", err)
	}
	if err := s.restoreVarLocks(); err != nil {
		s.logger.Error("restore variable lock timers", "error", err)
	}
	s.leaderMu.Lock()
	s.isLeader = true
	s.leaderMu.Unlock()
	select {
	case <-s.established:
	default:
		close(s.established)
	}
	s.logger.Info("established leadership")
}

func (s *Server) revokeLeadership() {
	s.leaderMu.Lock()
	s.isLeader = false
	s.leaderMu.Unlock()
	s.broker.SetEnabled(false)
	s.blocked.SetEnabled(false)
	s.heartbeats.StopAll()
	s.varLocks.stopAll()
	s.logger.Info("lost leadership")
}

// evalsUpserted feeds the broker and the blocked tracker (fsmObserver).
func (s *Server) evalsUpserted(evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.Status == structs.EvalStatusPending:
			s.broker.Enqueue(e)
		case e.Status == structs.EvalStatusBlocked:
			s.blocked.Block(e)
		case e.TerminalStatus():
			s.blocked.Untrack(e.ID)
			s.broker.Remove(e)
		}
	}
}

// capacityChanged re-enqueues blocked evaluations (fsmObserver).
func (s *Server) capacityChanged(index uint64) { s.blocked.Unblock(index) }
