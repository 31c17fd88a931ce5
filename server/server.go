package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/events"
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
	// aclCache keeps resolved ACL tokens (acl_resolve.go).
	aclCache aclCache
	logger   *slog.Logger
	clock    Clock

	fsm           *FSM
	raft          *raft.Raft
	raftTransport raft.Transport
	ownTransport  bool
	leaderCh      chan bool // raft's leadership notifications
	// leaderNotify wakes waiters when the leader changes (or this server
	// established or lost leadership); indexNotify when the state store
	// reached a new index.
	leaderNotify *notifier
	indexNotify  *notifier
	observerCh   chan raft.Observation // raft's leader observations
	cluster      *clusterState         // nil: a single server without a network of its own
	health       *healthTracker        // autopilot's view of the servers' health
	reestablish  chan struct{}         // a snapshot restore asks the leader to restart its duties

	broker     *evalBroker
	blocked    *blockedEvals
	heartbeats *heartbeats
	// gcConfig and gcTimes drive the garbage collector (gc.go).
	gcConfig  GCConfig
	gcTimes   gcTimeTable
	planQueue chan *pendingPlan
	handlers  *rpcapi.Handlers // every rpcapi method, bound to this server (rpc_api.go)
	// restartLeases are the template restart leases, on the leader
	// (restart_lease.go).
	restartLeases restartLeases
	keyring       *keyring.Keyring // the root keys, unwrapped (keyring_endpoint.go)
	varLocks      *varLocks        // the leader's variable lock timers (variable_locks.go)
	periodic      periodicRunner   // the leader's periodic dispatcher (periodic.go)
	// timeline records when evaluations and allocations reach the
	// servers' steps of their way to running (timeline.go).
	timeline *timeline.Recorder

	// planWaiting counts the plans waiting to be sent on planQueue
	// (metrics.go).
	planWaiting atomic.Int64
	// events is the event stream's buffer, fed by the FSM.
	events *events.Broker
	// pool runs the scheduler workers (worker_pool.go).
	pool *workerPool

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
		config:       c,
		logger:       c.Logger.With("server", c.NodeName),
		clock:        c.Clock,
		leaderCh:     make(chan bool, 16),
		planQueue:    make(chan *pendingPlan),
		ctx:          sctx,
		cancel:       cancel,
		established:  make(chan struct{}),
		leaderNotify: newNotifier(),
		indexNotify:  newNotifier(),
		observerCh:   make(chan raft.Observation, 16),
		health:       &healthTracker{since: map[string]time.Time{}},
		reestablish:  make(chan struct{}, 1),
	}
	s.timeline = timeline.New(0, c.Clock.Now)
	s.broker = newEvalBroker(c.Clock)
	s.broker.timeline = s.timeline
	s.broker.SetNackTimeout(c.EvalTimeout + evalNackSlack)
	s.blocked = newBlockedEvals(s.broker.Enqueue)
	s.heartbeats = newHeartbeats(c.Clock, c.HeartbeatGrace)
	s.gcConfig = c.GC
	s.varLocks = newVarLocks(c.Clock)
	s.handlers = s.newHandlers()
	kek := c.KEK
	if kek == nil {
		var err error
		if kek, err = keyring.GenerateProvisionalKEK(); err != nil {
			cancel()
			return nil, err
		}
	}
	s.keyring = keyring.New(kek)
	fsm, err := newFSM(s.logger, s)
	if err != nil {
		cancel()
		s.closeListener()
		return nil, err
	}
	s.fsm = fsm
	s.events = events.NewBroker(events.DefaultBufferSize)
	fsm.events = s.events
	fsm.timers = s.config.Timers
	if err := s.setup(); err != nil {
		cancel()
		err = errors.Join(err, s.closeSetup())
		s.closeListener()
		return nil, err
	}

	s.wg.Add(8)
	go func() { defer s.wg.Done(); s.monitorLeadership() }()
	go func() { defer s.wg.Done(); s.runVarLockExpiry() }()
	go func() { defer s.wg.Done(); s.runLeaderObserver() }()
	go func() { defer s.wg.Done(); s.runPlanApplier() }()
	go func() { defer s.wg.Done(); s.runHeartbeatExpiry() }()
	go func() { defer s.wg.Done(); s.runProgressDeadlines() }()
	go func() { defer s.wg.Done(); s.runDrainer() }() // drainer.go
	go func() { defer s.wg.Done(); s.runGC() }()      // gc.go
	s.pool = &workerPool{server: c.NodeName, run: s.runWorker, base: s.ctx, now: s.clock.Now}
	s.pool.resize(c.NumWorkers, slices.Clone(workerSchedulers))
	if s.cluster != nil {
		if err := s.startCluster(); err != nil {
			if serr := s.Shutdown(); serr != nil {
				err = errors.Join(err, serr)
			}
			return nil, err
		}
	}
	if s.cluster != nil && !s.alone() {
		// One of several servers: the cluster elects a leader once a
		// quorum is up, which may need servers not started yet.
		return s, nil
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

// setup prepares the cluster network and serf (for a server of a
// cluster) and starts raft.
func (s *Server) setup() error {
	if s.config.Cluster != nil {
		if err := s.setupClusterNetwork(); err != nil {
			return err
		}
		if err := s.setupSerf(); err != nil {
			return err
		}
	}
	if err := s.setupRaftWithNotify(); err != nil {
		return err
	}
	s.raft.RegisterObserver(raft.NewObserver(s.observerCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	}))
	return nil
}

// closeSetup releases what a failed setup made.
func (s *Server) closeSetup() error {
	var errs []error
	if s.raft != nil {
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, err)
		}
	}
	if c, ok := s.raftTransport.(io.Closer); ok && s.ownTransport {
		_ = c.Close()
	}
	if s.cluster != nil {
		if s.cluster.serf != nil {
			errs = append(errs, s.cluster.serf.Shutdown())
		}
		s.cluster.mux.close()
	}
	return errors.Join(errs...)
}

// closeListener closes the RPC listener NewServer was given when it fails
// before the mux owns it (the mux closes it otherwise).
func (s *Server) closeListener() {
	if s.cluster == nil && s.config.Cluster != nil && s.config.Cluster.RPCListener != nil {
		_ = s.config.Cluster.RPCListener.Close()
	}
}

// alone reports whether the server is its cluster's only voter.
func (s *Server) alone() bool {
	v := s.voters()
	return len(v) == 1 && v[0] == string(s.raftID())
}

// runLeaderObserver turns raft's leader observations into leaderNotify
// wake-ups.
func (s *Server) runLeaderObserver() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.observerCh:
			s.leaderNotify.notify()
			if s.cluster != nil {
				s.wakeCluster()
			}
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
		var errs []error
		// In-flight RPCs end first: their contexts are cancelled, and
		// a live raft answers those inside raft.Apply.
		if err := s.shutdownClusterRPC(); err != nil {
			errs = append(errs, err)
		}
		s.heartbeats.StopAll()
		s.varLocks.stopAll()
		// Wait for our goroutines before stopping raft: one may be in
		// raft.Apply, and a command raft committed but had not yet handed
		// to the FSM when it shut down never gets its future answered, so
		// the wait would hang (seen in TestJobVersionsAndRevert's Shutdown).
		// Every loop returns on s.ctx, and a live raft answers every Apply.
		s.wg.Wait()
		s.pool.stop()
		s.periodic.stop() // its context is done: it returns
		if s.raft != nil {
			if err := s.raft.Shutdown().Error(); err != nil {
				errs = append(errs, fmt.Errorf("shut down raft: %w", err))
			}
		}
		if c, ok := s.raftTransport.(io.Closer); ok && s.ownTransport {
			_ = c.Close()
		}
		if err := s.closeCluster(); err != nil {
			errs = append(errs, err)
		}
		s.broker.SetEnabled(false)
		s.blocked.SetEnabled(false)
		s.shutdownErr = errors.Join(errs...)
	})
	return s.shutdownErr
}

// Leader returns the RPC address of the leader, "" when there is none. A
// server without a network of its own reports its raft address.
func (s *Server) Leader() string {
	addr, _ := s.leaderRPC()
	return addr
}

// Peers returns the RPC addresses of the voters of the raft configuration,
// as serf knows them now (the configuration's address otherwise).
func (s *Server) Peers() []string {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var out []string
	for _, srv := range f.Configuration().Servers {
		out = append(out, s.rpcAddrOf(srv.ID, srv.Address))
	}
	return out
}

// RaftID returns the server's raft ID.
func (s *Server) RaftID() string { return string(s.raftID()) }

// ClusterID returns the ID of the cluster the server's state belongs to,
// "" before the first leader wrote it.
func (s *Server) ClusterID() string { return s.clusterID() }

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

// Events returns the event stream's broker: one batch per raft apply
// that changed a job, allocation, evaluation, deployment or node.
func (s *Server) Events() *events.Broker { return s.events }

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
		case <-s.reestablish:
			// The state was replaced: the broker, the blocked evals and
			// the heartbeat timers start over from it.
			if s.leader() {
				s.revokeLeadership()
				s.establishLeadership()
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
	if cfg, err := st.SchedulerConfig(nil); err == nil && cfg != nil {
		s.broker.SetPaused(cfg.PauseEvalBroker)
	}
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
			// A new leader gives every node a full TTL to find it.
			s.heartbeats.Reset(n.ID, scaledTTL(s.config.HeartbeatTTL, s.config.MaxHeartbeatsPerSecond, len(nodes)))
		}
	}
	if err := s.bootstrapRootKey(); err != nil {
		s.logger.Error("make the keyring's first root key", "error", err)
	}
	if err := s.restoreVarLocks(); err != nil {
		s.logger.Error("restore variable lock timers", "error", err)
	}
	s.periodic.start(s.ctx, s.newPeriodicDispatcher())
	if err := s.ensureServerSecret(); err != nil {
		s.logger.Error("make the servers' ACL secret", "error", err)
	}
	s.leaderMu.Lock()
	s.isLeader = true
	s.leaderMu.Unlock()
	select {
	case <-s.established:
	default:
		close(s.established)
	}
	s.leaderNotify.notify()
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
	s.periodic.stop()
	s.leaderNotify.notify()
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

// clusterMetaChanged wakes runCluster to gossip the cluster ID
// (fsmObserver).
func (s *Server) clusterMetaChanged() {
	if s.cluster != nil {
		s.wakeCluster()
	}
}

// applied wakes the waiters of an index (fsmObserver).
func (s *Server) applied() { s.indexNotify.notify() }
