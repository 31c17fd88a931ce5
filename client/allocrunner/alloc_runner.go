package allocrunner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// hookTimeout bounds destroy and shutdown hooks, which run after the
// runner's context is cancelled.
const hookTimeout = 30 * time.Second

// StateUpdater receives an allocation's client-side state each time it
// changes: an Allocation holding only ID, NodeID, ClientStatus,
// ClientDescription, TaskStates and DeploymentStatus. The Client implements
// it; it must not block.
type StateUpdater interface {
	AllocStateUpdated(update *structs.Allocation)
}

// DriverGetter returns the driver of a given name.
type DriverGetter func(name string) (drivers.DriverPlugin, error)

// Config configures an AllocRunner.
type Config struct {
	Logger *slog.Logger
	// Alloc is the server-sent allocation; it is never mutated.
	Alloc *structs.Allocation
	// AllocDirRoot is the directory under which alloc dirs are built.
	AllocDirRoot string
	// SecretsTmpfs mounts a tmpfs on each task's secrets directory
	// (allocdir.WithSecretsTmpfs); the agent turns it on.
	SecretsTmpfs bool
	StateDB      state.StateDB
	Drivers      DriverGetter
	StateUpdater StateUpdater
	// Node is the node the allocation runs on (for task environments).
	Node *structs.Node
	// BuildEnv overrides the task environment builder (nil: taskrunner.BuildEnv).
	BuildEnv taskrunner.EnvBuilder
	// KillGrace overrides taskrunner.DefaultKillGrace when positive.
	KillGrace time.Duration
	// PrevAllocWatcher waits for the allocation this one replaces and
	// migrates its data; nil when it replaces nothing.
	PrevAllocWatcher PrevAllocWatcher
	// PreemptedAllocWatcher waits for the allocations this one preempts;
	// nil when it preempts nothing.
	PreemptedAllocWatcher PrevAllocWatcher
	// Clock drives deployment health tracking and stamps the task states
	// (StartedAt, events) the health is judged on; nil uses the real clock.
	Clock Clock
	// Devices reserves the tasks' device instances (the client's device
	// manager); nil: tasks given devices fail to start.
	Devices taskrunner.DeviceReserver
	// DriverEvents delivers drivers' own task events to the task runners
	// (the client's driver manager); nil: none.
	DriverEvents taskrunner.DriverEvents
	// Artifacts fetches the tasks' artifacts; nil: the default getter.
	Artifacts taskrunner.ArtifactFetcher
	// Timeline records the steps of the allocation's way to running
	// (the client's timeline recorder); nil: none.
	Timeline taskrunner.TimelineMarker
	// StartGate bounds how many tasks of the node start at once (the
	// client's); nil: no bound.
	StartGate taskrunner.StartGate
	// Services registers the allocation's Nomad services with the
	// servers; nil: they are not registered (services_hook.go).
	Services ServiceRegistrar
	// Network makes the network namespaces of allocations in bridge and
	// CNI modes; nil: the client has none, and such an allocation fails.
	Network NetworkManager
	// Templates lets the tasks' templates read from the servers.
	Templates *taskrunner.TemplateConfig
	// Identities has the tasks' workload identities signed; TaskAPI
	// serves their task API sockets (taskrunner.Config).
	Identities taskrunner.IdentitySigner
	TaskAPI    taskrunner.TaskAPIListener
}

// AllocRunner runs one allocation. Create it with New, optionally Restore,
// then call Run in a goroutine.
type AllocRunner struct {
	id          string
	logger      *slog.Logger
	timeline    taskrunner.TimelineMarker
	stateDB     state.StateDB
	updater     StateUpdater
	allocDir    *allocdir.AllocDir
	hooks       []runnerHook
	services    *serviceHook
	network     *networkHook
	broadcaster *AllocBroadcaster
	// tasks and taskOrder are fixed after New.
	tasks     map[string]*taskrunner.TaskRunner
	taskOrder []string

	// states publishes the alloc's state and applies the group's rules
	// after task state changes (stateUpdate), from Run until the tasks
	// are done.
	states *pokeWorker
	// changeCh is closed and replaced on every task state change (and on
	// shutdown), for runTasks to wait for a condition on the tasks.
	changeMu sync.Mutex
	changeCh chan struct{}
	// updates applies server updates one at a time (applyUpdate), from
	// Run until Destroy or Shutdown; pendingUpdate is the latest one not
	// yet applied (only the latest matters), guarded by updateMu.
	updates       *pokeWorker
	updateMu      sync.Mutex
	pendingUpdate *structs.Allocation

	// ctx is the lifetime of the updates; Destroy and Shutdown cancel it.
	ctx    context.Context
	cancel context.CancelFunc
	// prerunCtx bounds the prerun hooks (waiting for a previous alloc may
	// take long): it is cancelled as soon as the alloc is stopped,
	// destroyed or shut down.
	prerunCtx    context.Context
	prerunCancel context.CancelFunc
	// waitCh is closed when Run returns (or by Destroy/Shutdown if Run never ran).
	waitCh     chan struct{}
	destroyCh  chan struct{}
	shutdownCh chan struct{}
	// killWG tracks kills started by the state loop.
	killWG sync.WaitGroup
	// restartReqCh carries RestartAllTasks requests to runTasks, which
	// serves them while the tasks run (unbuffered).
	restartReqCh chan *restartAllRequest
	// publishMu orders publications: a state computed earlier is never
	// sent after one computed later.
	publishMu sync.Mutex
	// localPersistMu serializes changes of the runner's own persisted
	// state (changeLocalState): each is persisted before it is shown.
	localPersistMu sync.Mutex
	destroyOnce    sync.Once
	shutdownOnce   sync.Once

	mu           sync.RWMutex // guards the fields below
	alloc        *structs.Allocation
	runClaimed   bool // Run, Destroy or Shutdown took the right to close waitCh
	restored     bool // Restore loaded the state of an earlier agent
	destroyed    bool
	shuttingDown bool
	stopping     bool            // stopped by the server or destroyed: the group rules no longer apply
	failure      string          // a prerun failure: the alloc is failed with this description
	trStarted    map[string]bool // task runners whose Run was started
	leaderDead   bool
	sibFailed    bool
	mainDead     bool
	// prerunDesc describes what the pending alloc waits for ("waiting for
	// previous alloc to terminate"); "" when nothing.
	prerunDesc string
	// deployStatus is the client's deployment health verdict; nil until
	// the health hook decides (or restored). deployStatusFor is the
	// deployment it was decided for.
	deployStatus    *structs.AllocDeploymentStatus
	deployStatusFor string
	// prevMigrated records that the waits for the preempted and previous
	// allocs and the data migration completed (persisted).
	prevMigrated bool
	// restartServing is not nil while runTasks serves restart requests,
	// and is closed when it stops; restarting is set while it carries one
	// out.
	restartServing chan struct{}
	restarting     bool
}

// New returns an AllocRunner and its TaskRunners. It starts nothing.
func New(cfg *Config) (*AllocRunner, error) {
	alloc := cfg.Alloc
	if alloc == nil || alloc.Job == nil {
		return nil, structs.Invalid("alloc runner: alloc with its job is required")
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, structs.Invalid("alloc %s: task group %q not found in job %q", alloc.ID, alloc.TaskGroup, alloc.JobID)
	}
	if cfg.AllocDirRoot == "" || cfg.StateDB == nil || cfg.Drivers == nil {
		return nil, structs.Invalid("alloc runner: alloc dir root, state db and drivers are required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("alloc_id", alloc.ID, "job_id", alloc.JobID)
	updater := cfg.StateUpdater
	if updater == nil {
		updater = noopUpdater{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	prerunCtx, prerunCancel := context.WithCancel(ctx)
	ar := &AllocRunner{
		id:           alloc.ID,
		logger:       logger,
		timeline:     cfg.Timeline,
		stateDB:      cfg.StateDB,
		updater:      updater,
		allocDir:     allocdir.New(cfg.AllocDirRoot, alloc.ID, allocdir.WithLogger(logger), allocdir.WithSecretsTmpfs(cfg.SecretsTmpfs)),
		broadcaster:  NewAllocBroadcaster(),
		tasks:        make(map[string]*taskrunner.TaskRunner, len(tg.Tasks)),
		changeCh:     make(chan struct{}),
		restartReqCh: make(chan *restartAllRequest),
		ctx:          ctx,
		cancel:       cancel,
		prerunCtx:    prerunCtx,
		prerunCancel: prerunCancel,
		waitCh:       make(chan struct{}),
		destroyCh:    make(chan struct{}),
		shutdownCh:   make(chan struct{}),
		alloc:        alloc,
		trStarted:    make(map[string]bool),
	}
	ar.updates, ar.states = newPokeWorker(ar.applyUpdate), newPokeWorker(ar.stateUpdate)
	clock := cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	ar.services = newServiceHook(ar, cfg.Services, clock, cfg.Node)
	netHook := &networkHook{manager: cfg.Network, drivers: cfg.Drivers, logger: logger}
	ar.network = netHook
	ar.hooks = []runnerHook{
		&allocDirHook{dir: ar.allocDir, logger: logger},
		// After the waits: a previous allocation may hold the host ports.
		newAllocWatcherHook(ar, cfg.PrevAllocWatcher, cfg.PreemptedAllocWatcher),
		netHook,
		newHealthHook(ar, clock),
		ar.services, // services_hook.go
	}
	for _, task := range tg.Tasks {
		driver, err := cfg.Drivers(task.Driver)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("alloc %s: task %q: %w", alloc.ID, task.Name, err)
		}
		tcfg := &taskrunner.Config{
			Logger:       logger,
			Alloc:        alloc,
			Task:         task,
			AllocDir:     ar.allocDir,
			Driver:       driver,
			StateDB:      cfg.StateDB,
			StateUpdater: taskNotifier{ar},
			Node:         cfg.Node,
			BuildEnv:     cfg.BuildEnv,
			KillGrace:    cfg.KillGrace,
			Now:          clock.Now,
			Devices:      cfg.Devices,
			DriverEvents: cfg.DriverEvents,
			Artifacts:    cfg.Artifacts,
			Timeline:     cfg.Timeline,
			StartGate:    cfg.StartGate,
			Network:      netHook.Spec,
			Templates:    cfg.Templates,
			Identities:   cfg.Identities,
			TaskAPI:      cfg.TaskAPI,
		}
		tr, err := taskrunner.New(tcfg)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("alloc %s: %w", alloc.ID, err)
		}
		ar.tasks[task.Name] = tr
		ar.taskOrder = append(ar.taskOrder, task.Name)
	}
	return ar, nil
}

type noopUpdater struct{}

func (noopUpdater) AllocStateUpdated(*structs.Allocation) {}

// taskNotifier is the TaskRunners' StateUpdater: it wakes the state
// worker.
type taskNotifier struct{ ar *AllocRunner }

// TaskStateUpdated pokes the state worker and wakes runTasks without
// blocking.
func (n taskNotifier) TaskStateUpdated() {
	n.ar.states.poke()
	n.ar.notifyChange()
}

// changed returns a channel closed at the next task state change.
func (ar *AllocRunner) changed() <-chan struct{} {
	ar.changeMu.Lock()
	defer ar.changeMu.Unlock()
	return ar.changeCh
}

// notifyChange wakes every waiter of changed.
func (ar *AllocRunner) notifyChange() {
	ar.changeMu.Lock()
	defer ar.changeMu.Unlock()
	close(ar.changeCh)
	ar.changeCh = make(chan struct{})
}

// Restore loads the runner's own persisted state (its deployment health
// verdict, whether the previous alloc was waited for and migrated) and
// the tasks'; call it before Run.
func (ar *AllocRunner) Restore() error {
	if err := ar.restoreLocalState(); err != nil {
		return fmt.Errorf("restore alloc %s: %w", ar.id, err)
	}
	for _, name := range ar.taskOrder {
		if err := ar.tasks[name].Restore(); err != nil {
			return fmt.Errorf("restore alloc %s: %w", ar.id, err)
		}
	}
	ar.mu.Lock()
	ar.restored = true
	ar.mu.Unlock()
	return nil
}

// ID returns the allocation's ID.
func (ar *AllocRunner) ID() string { return ar.id }

// TaskInvocations returns the configs of the invocations its tasks run or
// are starting (see TaskRunner.Invocation), in task order. They must not
// be mutated.
func (ar *AllocRunner) TaskInvocations() []*drivers.TaskConfig {
	var out []*drivers.TaskConfig
	for _, name := range ar.taskOrder {
		if cfg := ar.tasks[name].Invocation(); cfg != nil {
			out = append(out, cfg)
		}
	}
	return out
}

// Alloc returns the latest server-sent allocation. It must not be mutated.
func (ar *AllocRunner) Alloc() *structs.Allocation {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	return ar.alloc
}

// AllocDir returns the allocation's directory.
func (ar *AllocRunner) AllocDir() *allocdir.AllocDir { return ar.allocDir }

// AllocState returns the allocation's runtime state; it takes read locks only.
func (ar *AllocRunner) AllocState() *State {
	states := make(map[string]*structs.TaskState, len(ar.tasks))
	for name, tr := range ar.tasks {
		states[name] = tr.TaskState()
	}
	status, desc := ClientStatus(states)
	ar.mu.RLock()
	if ar.failure != "" {
		status, desc = structs.AllocClientStatusFailed, ar.failure
	} else if ar.prerunDesc != "" && status == structs.AllocClientStatusPending {
		desc = ar.prerunDesc
	}
	deploy, deployFor := ar.deployStatus.Copy(), ar.deployStatusFor
	ar.mu.RUnlock()
	if deploy == nil {
		deployFor = ""
	}
	return &State{ClientStatus: status, ClientDescription: desc, TaskStates: states, DeploymentStatus: deploy, DeploymentID: deployFor}
}

// TaskStatus is a task's state name ("pending", "running", "dead").
type TaskStatus struct{ Task, State string }

// StatusSummary returns the allocation's client status, as AllocState
// would, and appends each task's state name to dst: metrics read it for
// every allocation each collection interval, so it copies no state and
// allocates nothing beyond dst's growth.
func (ar *AllocRunner) StatusSummary(dst []TaskStatus) (status string, tasks []TaskStatus) {
	var acc statusAcc
	for _, name := range ar.taskOrder {
		state, failed := ar.tasks[name].StateName()
		acc.add(state, failed)
		dst = append(dst, TaskStatus{Task: name, State: state})
	}
	status, _ = acc.status()
	ar.mu.RLock()
	if ar.failure != "" {
		status = structs.AllocClientStatusFailed
	}
	ar.mu.RUnlock()
	return status, dst
}

// clientAlloc returns a copy of the allocation with its runtime state
// (the runner's health verdict over the server's deployment status, for
// listeners), and the runner's own verdict with the deployment it is for
// (nil and "" when it has decided none): what the servers are sent.
func (ar *AllocRunner) clientAlloc() (*structs.Allocation, *structs.AllocDeploymentStatus, string) {
	st := ar.AllocState()
	a := ar.Alloc().Copy()
	a.ClientStatus = st.ClientStatus
	a.ClientDescription = st.ClientDescription
	a.TaskStates = st.TaskStates
	a.NetworkStatus = ar.network.NetworkStatus(a)
	if st.DeploymentStatus != nil {
		a.DeploymentStatus = st.DeploymentStatus
	}
	return a, st.DeploymentStatus, st.DeploymentID
}

// Listen returns a listener of the allocation's versions with runtime state.
func (ar *AllocRunner) Listen() *AllocListener { return ar.broadcaster.Listen() }

// WaitCh is closed when Run returns.
func (ar *AllocRunner) WaitCh() <-chan struct{} { return ar.waitCh }

// DestroyCh is closed when Destroy has finished.
func (ar *AllocRunner) DestroyCh() <-chan struct{} { return ar.destroyCh }

// ShutdownCh is closed when Shutdown has finished.
func (ar *AllocRunner) ShutdownCh() <-chan struct{} { return ar.shutdownCh }

// IsDestroyed reports whether Destroy was called.
func (ar *AllocRunner) IsDestroyed() bool {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	return ar.destroyed
}

// Run runs the allocation until all its tasks are dead (or the runner is
// shut down), then closes WaitCh. Only the first call runs. A new (not
// restored) runner first persists its allocation, durably, so that a
// restarted agent knows of it before any of its tasks can have started;
// if that fails, the allocation fails and no task starts.
func (ar *AllocRunner) Run() {
	ar.mu.Lock()
	if ar.runClaimed {
		ar.mu.Unlock()
		return
	}
	ar.runClaimed = true
	restored := ar.restored
	ar.mu.Unlock()
	defer close(ar.waitCh)
	var persistErr error
	if !restored {
		// Before the update loop: a newer version it persists must not
		// be overwritten by this one.
		if persistErr = ar.stateDB.PutAllocation(ar.Alloc()); persistErr != nil {
			ar.logger.Error("could not persist the allocation: not running it", "error", persistErr)
			ar.mu.Lock()
			ar.failure = fmt.Sprintf("could not record the allocation in the client's state: %v", persistErr)
			ar.mu.Unlock()
		}
	}
	if ar.timeline != nil {
		ar.timeline.Mark(ar.id, structs.StepRunnerStarted)
	}

	ar.updates.start()
	ar.states.start()
	if restored {
		// The earlier agent may have died before it told the servers of
		// its last states (tasks it recorded running while the servers
		// still see them pending), and re-attaching changes none of them:
		// publish the restored state once.
		taskNotifier{ar}.TaskStateUpdated()
	}

	alloc := ar.Alloc()
	switch {
	case persistErr != nil:
		// Failed above: nothing may start that a restart would not know.
	case alloc.ServerTerminalStatus():
		// Stopped before it ran: the tasks converge to killed at once.
		ar.stop(true)
	default:
		if err := ar.prerun(ar.prerunCtx); err != nil {
			if ar.prerunCtx.Err() != nil {
				// Stopped, destroyed or shut down while waiting: the
				// stop path converges the tasks; nothing failed.
				ar.logger.Info("prerun interrupted", "error", err)
				break
			}
			ar.logger.Error("prerun failed", "error", err)
			ar.mu.Lock()
			ar.failure = fmt.Sprintf("prerun failed: %v", err)
			ar.mu.Unlock()
			break
		}
		ar.runTasks()
	}
	ar.waitStartedTasks()
	ar.states.stop()
	ar.publish() // the final state
	ar.killWG.Wait()
	ar.waitStartedTasks()
	if !ar.isShuttingDown() {
		ar.postrun(ar.ctx)
	}
}

// phases are an allocation's task runners by lifecycle phase, each in
// the group's task order.
type phases struct {
	prestart, main, poststart, poststop []*taskrunner.TaskRunner
}

// lifecyclePhases sorts the task runners by lifecycle phase.
func (ar *AllocRunner) lifecyclePhases() *phases {
	ph := &phases{}
	for _, name := range ar.taskOrder {
		tr := ar.tasks[name]
		switch t := tr.Task(); {
		case t.IsPrestart():
			ph.prestart = append(ph.prestart, tr)
		case t.IsPoststart():
			ph.poststart = append(ph.poststart, tr)
		case t.IsPoststop():
			ph.poststop = append(ph.poststop, tr)
		default:
			ph.main = append(ph.main, tr)
		}
	}
	return ph
}

// runTasks runs the lifecycle phases: prestart tasks (the non-sidecar ones
// to completion), then the main tasks, then, once the main tasks have
// started, the poststart tasks, until the tasks of these phases are dead
// (serving RestartAllTasks meanwhile); then poststop tasks.
func (ar *AllocRunner) runTasks() {
	ph := ar.lifecyclePhases()
	prestart, main, poststart, poststop := ph.prestart, ph.main, ph.poststart, ph.poststop
	stopServing := ar.serveRestarts()
	defer stopServing()
	for _, tr := range prestart {
		ar.startTaskRunner(tr)
	}
	for _, tr := range prestart {
		if !tr.Task().IsSidecar() {
			<-tr.WaitCh()
		}
	}
	ar.checkTasks()
	if ar.isShuttingDown() {
		return
	}
	for _, tr := range main {
		ar.startTaskRunner(tr)
	}
	ar.waitStarted(main)
	if ar.isShuttingDown() {
		return
	}
	for _, tr := range poststart {
		ar.startTaskRunner(tr)
	}
	ar.waitTasks(ph)
	stopServing()
	if ar.isShuttingDown() {
		return
	}
	for _, tr := range poststop {
		ar.startTaskRunner(tr)
	}
	for _, tr := range poststop {
		<-tr.WaitCh()
	}
}

// waitStarted waits until every task of trs has started once or its
// runner has returned (the task is dead or the runner shut down), or the
// alloc runner shuts down: a task runner that only begins to run after
// the shutdown returns at once without a state change that would wake
// this wait.
func (ar *AllocRunner) waitStarted(trs []*taskrunner.TaskRunner) {
	for {
		changed := ar.changed()
		if allStarted(trs) || ar.isShuttingDown() {
			return
		}
		<-changed
	}
}

func allStarted(trs []*taskrunner.TaskRunner) bool {
	for _, tr := range trs {
		select {
		case <-tr.WaitCh():
			continue
		default:
		}
		if st := tr.TaskState(); st.State == structs.TaskStatePending && st.StartedAt.IsZero() {
			return false
		}
	}
	return true
}

// startTaskRunner runs tr in a goroutine, once. The goroutine ends when
// tr's WaitCh closes, which Run (or a kill) waits for.
func (ar *AllocRunner) startTaskRunner(tr *taskrunner.TaskRunner) {
	ar.mu.Lock()
	started := ar.trStarted[tr.Name()]
	ar.trStarted[tr.Name()] = true
	ar.mu.Unlock()
	if !started {
		go tr.Run()
	}
}

// waitStartedTasks waits for every started TaskRunner to return.
func (ar *AllocRunner) waitStartedTasks() {
	for _, name := range ar.taskOrder {
		ar.mu.RLock()
		started := ar.trStarted[name]
		ar.mu.RUnlock()
		if started {
			<-ar.tasks[name].WaitCh()
		}
	}
}

// setStopping records that every task is being killed on purpose. It
// does not interrupt the prerun hooks: the caller does that once the kill
// has marked the tasks that never started (see stop), so that Run, woken
// from an interrupted prerun, finds every task already converging.
func (ar *AllocRunner) setStopping() {
	ar.mu.Lock()
	ar.stopping = true
	ar.mu.Unlock()
}

// stop kills every task (but poststop ones) on purpose, then interrupts
// the prerun hooks (e.g. a wait for a previous alloc).
func (ar *AllocRunner) stop(includePoststop bool) {
	ar.setStopping()
	ar.killTasks(structs.NewTaskEvent(structs.TaskKilling), includePoststop, nil)
	ar.prerunCancel()
}

func (ar *AllocRunner) isShuttingDown() bool {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	return ar.shuttingDown
}

// stateUpdate applies the group's rules to the task states and publishes
// the alloc's state: the state worker's run, after task state changes.
func (ar *AllocRunner) stateUpdate() {
	ar.checkTasks()
	ar.publish()
}

// publish sends the runtime state to the Client and the alloc to listeners.
func (ar *AllocRunner) publish() {
	ar.publishMu.Lock()
	defer ar.publishMu.Unlock()
	ca, verdict, verdictFor := ar.clientAlloc()
	ar.updater.AllocStateUpdated(&structs.Allocation{
		ID:                ca.ID,
		NodeID:            ca.NodeID,
		ClientStatus:      ca.ClientStatus,
		ClientDescription: ca.ClientDescription,
		TaskStates:        ca.TaskStates,
		DeploymentID:      verdictFor,
		DeploymentStatus:  verdict, // never the server's copy echoed back
		NetworkStatus:     ca.NetworkStatus,
	})
	ar.broadcaster.Send(ca)
}
