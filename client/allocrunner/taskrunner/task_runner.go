package taskrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Defaults of the bounds the TaskRunner puts on a driver.
const (
	// DefaultKillGrace is how long past a task's kill timeout the runner
	// waits for the driver to report the task's exit before giving up.
	DefaultKillGrace = 5 * time.Second
	// destroyTimeout bounds DestroyTask after a task exited.
	destroyTimeout = 10 * time.Second
	// maxTaskEvents is how many events a TaskState keeps (the oldest go).
	maxTaskEvents = 10
)

// StateUpdater is told that a task's state changed. The AllocRunner
// implements it; it must not block.
type StateUpdater interface {
	TaskStateUpdated()
}

// Config configures a TaskRunner.
type Config struct {
	Logger *slog.Logger
	// Alloc is the server-sent allocation; it is never mutated.
	Alloc *structs.Allocation
	// Task is the task to run, one of Alloc's job's tasks.
	Task     *structs.Task
	AllocDir *allocdir.AllocDir
	Driver   drivers.DriverPlugin
	StateDB  state.StateDB
	// StateUpdater is told of every state change.
	StateUpdater StateUpdater
	// Node is the node the task runs on, for its environment.
	Node *structs.Node
	// BuildEnv builds the task's environment; nil means BuildEnv.
	BuildEnv EnvBuilder
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// KillGrace overrides DefaultKillGrace when positive.
	KillGrace time.Duration
	// RestartJitter, when set, adds a random delay to restart delays.
	RestartJitter func(time.Duration) time.Duration
	// Devices reserves the task's device instances before it starts;
	// nil: a task given devices fails to start.
	Devices DeviceReserver
	// Artifacts fetches the task's artifacts before it starts; nil: a
	// getter with the default configuration.
	Artifacts ArtifactFetcher
	// Templates lets the task's templates read from the servers; nil: a
	// task with templates fails its setup.
	Templates *TemplateConfig
	// DriverEvents delivers the driver's own task events; nil: none.
	DriverEvents DriverEvents
	// StatsInterval is how often the driver is asked for a resource usage
	// sample while the task runs; 0 means DefaultStatsInterval.
	StatsInterval time.Duration
	// Timeline records the steps of the task's first start (hooks done,
	// driver start, running) under the allocation's ID; nil: none.
	Timeline TimelineMarker
	// StartGate bounds how many tasks of the node start at once (the
	// client's); nil: no bound.
	StartGate StartGate
	// Network returns the allocation's network namespace (bridge and CNI
	// modes), which the alloc runner's network hook made before any task
	// starts; nil (or a nil result): the task has none.
	Network func() *drivers.NetworkIsolationSpec
	// Identities has the task's workload identities signed; nil: a task
	// that asks for its identity (identity { env or file }) fails its
	// setup (identity_hook.go).
	Identities IdentitySigner
	// TaskAPI serves the task API socket (secrets/api.sock); nil: no
	// task API (task_api_hook.go).
	TaskAPI TaskAPIListener
}

// StartGate bounds how many tasks start at once: Enter waits for a turn,
// or until ctx is done, and returns the function that ends the turn.
type StartGate interface {
	Enter(ctx context.Context) (leave func(), err error)
}

// TimelineMarker records that an allocation reached a step of its way to
// running; only the first time of each step counts. The client's
// timeline.Recorder implements it.
type TimelineMarker interface {
	Mark(allocID string, step structs.TimelineStep)
}

// TaskRunner runs one task. Create it with New, optionally Restore its
// persisted state, then call Run in a goroutine.
type TaskRunner struct {
	allocID   string
	taskName  string
	logger    *slog.Logger
	driver    drivers.DriverPlugin
	stateDB   state.StateDB
	updater   StateUpdater
	allocDir  *allocdir.AllocDir
	taskDir   *allocdir.TaskDir
	now       func() time.Time
	killGrace time.Duration
	// node is the node the task runs on, for interpolation.
	node      *structs.Node
	timeline  TimelineMarker // nil: none
	startGate StartGate      // nil: none
	// network returns the allocation's network namespace; never nil.
	network func() *drivers.NetworkIsolationSpec

	// driverName and driverEvents route the driver's task events here.
	driverName   string
	driverEvents DriverEvents

	// Owned by the run loop goroutine.
	restartTracker *RestartTracker
	prestartHooks  []prestartHook
	hooksDone      map[string]bool
	resources      hookResources
	// stats keeps the latest resource usage sample of the running task.
	stats *statsHook
	// templates renders and watches the task's templates; buildEnv is
	// its environment when the agent finds the task running.
	templates *templateHook
	taskAPI   *taskAPIHook
	// identities renews the task's identities while the run lasts.
	identities *identityHook
	buildEnv   EnvBuilder

	// shutdownCtx stops the run loop leaving the task running.
	shutdownCtx    context.Context
	shutdownCancel context.CancelFunc
	// restartCh carries operator restart requests to the run loop; it is
	// sent to under mu.
	restartCh chan *restartRequest

	// persistMu serializes taking a state snapshot and persisting it, so
	// that the stored state is never older than an earlier snapshot.
	persistMu sync.Mutex

	mu    sync.RWMutex // guards the fields below
	alloc *structs.Allocation
	task  *structs.Task
	state *structs.TaskState
	// stateChanged is closed (and replaced) whenever state changes.
	stateChanged chan struct{}
	local        *state.LocalState
	killReason   string
	// killCtx, a child of shutdownCtx, is cancelled by Kill; waitCh is
	// closed when Run returns. Both belong to one run of the task: Rearm
	// replaces them (and clears runClaimed) once Run has returned.
	killCtx    context.Context
	killCancel context.CancelFunc
	waitCh     chan struct{}
	runClaimed bool
	// starts counts the task's successful starts.
	starts int
}

// New returns a TaskRunner for cfg.Task. It starts nothing.
func New(cfg *Config) (*TaskRunner, error) {
	switch {
	case cfg.Alloc == nil || cfg.Alloc.Job == nil:
		return nil, structs.Invalid("task runner: alloc with its job is required")
	case cfg.Task == nil:
		return nil, structs.Invalid("task runner: task is required")
	case cfg.AllocDir == nil:
		return nil, structs.Invalid("task runner: alloc dir is required")
	case cfg.Driver == nil:
		return nil, structs.Invalid("task runner: task %q: driver %q is not available", cfg.Task.Name, cfg.Task.Driver)
	case cfg.StateDB == nil:
		return nil, structs.Invalid("task runner: state db is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	buildEnv := cfg.BuildEnv
	if buildEnv == nil {
		buildEnv = BuildEnv
	}
	killGrace := cfg.KillGrace
	if killGrace <= 0 {
		killGrace = DefaultKillGrace
	}
	updater := cfg.StateUpdater
	if updater == nil {
		updater = noopUpdater{}
	}
	shutdownCtx, shutdownCancel := context.WithCancel(context.Background())
	killCtx, killCancel := context.WithCancel(shutdownCtx)
	tr := &TaskRunner{
		allocID:        cfg.Alloc.ID,
		taskName:       cfg.Task.Name,
		logger:         logger.With("alloc_id", cfg.Alloc.ID, "task", cfg.Task.Name, "driver", cfg.Task.Driver),
		driver:         cfg.Driver,
		driverName:     cfg.Task.Driver,
		driverEvents:   cfg.DriverEvents,
		stateDB:        cfg.StateDB,
		updater:        updater,
		allocDir:       cfg.AllocDir,
		taskDir:        cfg.AllocDir.NewTaskDir(cfg.Task.Name),
		now:            now,
		killGrace:      killGrace,
		node:           cfg.Node,
		timeline:       cfg.Timeline,
		startGate:      cfg.StartGate,
		network:        networkOf(cfg.Network),
		restartTracker: NewTaskRestartTracker(cfg.Task.RestartPolicy, cfg.Alloc.Job.Type, cfg.Task.Lifecycle),
		hooksDone:      make(map[string]bool),
		shutdownCtx:    shutdownCtx,
		shutdownCancel: shutdownCancel,
		killCtx:        killCtx,
		killCancel:     killCancel,
		restartCh:      make(chan *restartRequest, 1),
		waitCh:         make(chan struct{}),
		alloc:          cfg.Alloc,
		task:           cfg.Task,
		state:          structs.NewTaskState(),
		stateChanged:   make(chan struct{}),
		local:          &state.LocalState{},
	}
	tr.stats = newStatsHook(cfg.Driver, cfg.StatsInterval, tr.logger)
	tr.templates = &templateHook{cfg: cfg.Templates, task: tr, logger: tr.logger}
	tr.taskAPI = &taskAPIHook{api: cfg.TaskAPI, logger: tr.logger}
	tr.identities = &identityHook{signer: cfg.Identities, logger: tr.logger}
	tr.buildEnv = buildEnv
	if cfg.RestartJitter != nil {
		tr.restartTracker.SetJitter(cfg.RestartJitter)
	}
	tr.prestartHooks = []prestartHook{
		&taskDirHook{events: tr},
		&logsHook{},
		&envHook{build: buildEnv, node: cfg.Node, network: networkOf(cfg.Network)},
		&deviceHook{reserver: cfg.Devices},
		&volumeHook{volumes: nodeHostVolumes(cfg.Node), driver: cfg.Driver},                        // volume_hook.go
		&artifactHook{fetcher: artifactFetcher(cfg.Artifacts, logger), events: tr, node: cfg.Node}, // artifact_hook.go
		tr.identities,   // identity_hook.go
		tr.taskAPI,      // task_api_hook.go
		&dispatchHook{}, // dispatch_hook.go
		tr.templates,    // template_hook.go
	}
	received := structs.NewTaskEvent(structs.TaskReceived)
	received.Time = now().UnixNano()
	tr.state.Events = []*structs.TaskEvent{received.PopulateDisplayMessage()}
	return tr, nil
}

type noopUpdater struct{}

func (noopUpdater) TaskStateUpdated() {}

// Restore loads the task's persisted state, driver handle and hook states.
// Call it before Run; Run then re-attaches to a task that is still
// running, skips the hooks that reported Done and gives the others the
// state they saved.
func (tr *TaskRunner) Restore() error {
	ls, ts, err := tr.stateDB.GetTaskRunnerState(tr.allocID, tr.taskName)
	if err != nil {
		return fmt.Errorf("restore task %q: %w", tr.taskName, err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if ts != nil {
		tr.state = ts
	}
	if ls != nil {
		tr.local = ls
		for name, hs := range ls.HookState {
			if hs != nil && hs.Done {
				tr.hooksDone[name] = true
			}
		}
	}
	return nil
}

// Name returns the task's name.
func (tr *TaskRunner) Name() string { return tr.taskName }

// Invocation returns the config of the task's current invocation as the
// runner knows it: its handle's, else its start intent's; nil when none
// (the task is not running nor starting). It must not be mutated.
func (tr *TaskRunner) Invocation() *drivers.TaskConfig {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	if h := tr.local.TaskHandle; h != nil && h.Config != nil {
		return h.Config
	}
	return tr.local.StartIntent
}

// Task returns the task (from the latest alloc); it must not be mutated.
func (tr *TaskRunner) Task() *structs.Task {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.task
}

// LatestStats returns the latest resource usage sample of the running
// task, as its driver reported it; nil when the task does not run or no
// sample came yet. The stats hook samples the task only while someone
// reads its stats: a read after a quiet spell waits briefly for a first
// sample. The result must not be mutated.
func (tr *TaskRunner) LatestStats() *drivers.TaskResourceUsage { return tr.stats.Latest() }

// IsLeader reports whether the task is its group's leader.
func (tr *TaskRunner) IsLeader() bool { return tr.Task().Leader }

// TaskState returns a copy of the task's state.
func (tr *TaskRunner) TaskState() *structs.TaskState {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.state.Copy()
}

// StateName returns the task's state ("pending", "running", "dead") and
// whether it failed: what a status summary needs (metrics read it every
// collection interval, for every task), without copying the state.
func (tr *TaskRunner) StateName() (state string, failed bool) {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.state.State, tr.state.Failed
}

// WaitCh is closed when Run returns: the task is dead, or the runner was
// shut down.
// After Rearm it is the next run's channel.
func (tr *TaskRunner) WaitCh() <-chan struct{} {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.waitCh
}

// killContext returns the current run's kill context.
func (tr *TaskRunner) killContext() context.Context {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.killCtx
}

// Update replaces the runner's allocation with a newer one.
func (tr *TaskRunner) Update(alloc *structs.Allocation) {
	var task *structs.Task
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			task = tg.LookupTask(tr.taskName)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.alloc = alloc
	if task != nil {
		tr.task = task
	}
}

func (tr *TaskRunner) allocAndTask() (*structs.Allocation, *structs.Task) {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.alloc, tr.task
}

// Run runs the task until it is dead or the runner is shut down, then
// closes WaitCh. Only the first call runs; later ones return at once,
// until Rearm prepares another run.
func (tr *TaskRunner) Run() {
	tr.mu.Lock()
	if tr.runClaimed {
		tr.mu.Unlock()
		return
	}
	tr.runClaimed = true
	waitCh := tr.waitCh
	tr.mu.Unlock()
	defer close(waitCh)
	defer tr.templates.stop()  // the watch lasts as long as the run
	defer tr.taskAPI.Stop()    // so does the task API socket
	defer tr.identities.Stop() // and the renewal of its identities
	tr.run()
}

// run is the run loop. Each pass: prestart hooks, start, wait, then the
// restart policy decides; a kill or shutdown is checked at every step.
func (tr *TaskRunner) run() {
	if tr.TaskState().State == structs.TaskStateDead {
		return // restored a finished task
	}
	handle, lost := tr.recoverHandle()
	if handle != nil {
		tr.resumeTemplates()
		tr.resumeIdentities() // identity_hook.go
	}
	if lost != nil {
		// The task ended while the agent was down: an abnormal exit.
		if tr.shutdownCtx.Err() != nil {
			return
		}
		if tr.killContext().Err() != nil {
			tr.killedLost(lost)
			return
		}
		if !tr.restartOrStop(tr.restartTracker.OnExit(tr.now(), lost)) {
			return
		}
	}
	for {
		if handle == nil {
			if tr.shutdownCtx.Err() != nil {
				return
			}
			if tr.killContext().Err() != nil {
				tr.killedNotRunning()
				return
			}
			if err := tr.runPrestartHooks(tr.killContext()); err != nil {
				if tr.stopping() {
					return
				}
				if drivers.IsRecoverable(err) {
					// A hook's failure that may pass (an artifact's
					// download): the restart policy decides, as for a
					// failed start.
					tr.logger.Warn("prestart failed", "error", err)
					if !tr.restartOrStop(tr.restartTracker.OnStartError(tr.now(), true)) {
						return
					}
					continue
				}
				tr.logger.Error("prestart failed", "error", err)
				tr.updateState(structs.TaskStateDead,
					structs.NewTaskEvent(structs.TaskSetupFailure).SetSetupError(err).SetFailsTask())
				return
			}
			if tr.stopping() {
				return // killed during the hooks: never start
			}
			tr.mark(structs.StepHooksDone)
			h, err := tr.startTask()
			if err != nil {
				if tr.stopping() {
					return
				}
				recoverable := drivers.IsRecoverable(err)
				tr.logger.Error("start failed", "error", err, "recoverable", recoverable)
				ev := structs.NewTaskEvent(structs.TaskDriverFailure).SetDriverError(err)
				if !recoverable {
					ev.SetFailsTask()
				}
				tr.EmitEvent(ev)
				if !tr.restartOrStop(tr.restartTracker.OnStartError(tr.now(), recoverable)) {
					return
				}
				continue
			}
			handle = h
		}

		res, out, req := tr.waitTask(handle)
		switch out {
		case outcomeShutdown:
			return
		case outcomeKilled:
			return
		case outcomeUserRestart:
			handle = nil
			tr.updateState(structs.TaskStatePending,
				structs.NewTaskEvent(structs.TaskRestarting).SetRestartReason(req.reason))
			if !tr.holdForRestart(req) {
				return
			}
			continue
		}
		handle = nil
		if !tr.restartOrStop(tr.restartTracker.OnExit(tr.now(), res)) {
			return
		}
	}
}

// stopping reports whether the run loop must stop: on shutdown (leaving
// state as is) or on kill (recording the kill). It is for errors that may
// have been caused by the cancelled context.
func (tr *TaskRunner) stopping() bool {
	if tr.shutdownCtx.Err() != nil {
		return true
	}
	if tr.killContext().Err() != nil {
		tr.killedNotRunning()
		return true
	}
	return false
}

// restartOrStop applies a restart decision: records Not Restarting and
// returns false, or records Restarting, waits out the delay and returns
// true. A kill or shutdown during the delay returns false.
func (tr *TaskRunner) restartOrStop(d RestartDecision) bool {
	if !d.Restart {
		ev := structs.NewTaskEvent(structs.TaskNotRestarting).SetRestartReason(d.Reason)
		if d.Failed {
			ev.SetFailsTask()
		}
		tr.updateState(structs.TaskStateDead, ev)
		return false
	}
	tr.updateState(structs.TaskStatePending,
		structs.NewTaskEvent(structs.TaskRestarting).SetRestartReason(d.Reason).SetRestartDelay(d.Delay))
	timer := time.NewTimer(d.Delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case req := <-tr.restartCh:
		// An operator restart during the delay: the task is not running,
		// so there is nothing to stop; start it now (or when released).
		return tr.holdForRestart(req)
	case <-tr.killContext().Done():
		if tr.shutdownCtx.Err() == nil {
			tr.killedNotRunning()
		}
		return false
	}
}

// killedNotRunning records a kill of a task that was not running.
func (tr *TaskRunner) killedNotRunning() {
	tr.updateState(structs.TaskStateDead, structs.NewTaskEvent(structs.TaskKilled))
}

// startTask starts the task with a new invocation ID and persists its
// handle. The start is written ahead: the invocation and its config are
// persisted (durably) as the start intent before the driver is asked, so
// that an agent that dies during the start finds the task by the intent
// instead of starting a second one (recoverIntent).
//
// Starts take turns through the StartGate: a node that starts many tasks
// at once starts a bounded number concurrently, so that each finishes
// quickly instead of all of them thrashing the CPU together.
func (tr *TaskRunner) startTask() (*drivers.TaskHandle, error) {
	if tr.startGate != nil {
		leave, err := tr.startGate.Enter(tr.killContext())
		if err != nil {
			return nil, fmt.Errorf("start task %q: waiting for a turn to start: %w", tr.taskName, err)
		}
		defer leave()
	}
	alloc, task := tr.allocAndTask()
	invocation := structs.GenerateUUID()[:8]
	cfg, err := tr.buildTaskConfig(alloc, task, invocation)
	if err != nil {
		return nil, err
	}
	err = tr.updateLocal("start intent", func(ls *state.LocalState) {
		ls.InvocationID, ls.TaskHandle, ls.StartIntent = invocation, nil, cfg
	})
	if err != nil {
		// Without the intent on disk, a crash during the start could
		// leave a task nobody knows of: do not start.
		return nil, drivers.NewRecoverableError(fmt.Errorf("start task %q: record the start intent: %w", task.Name, err), true)
	}
	tr.mark(structs.StepDriverStart)
	h, err := tr.driver.StartTask(tr.killContext(), cfg)
	if err == nil && (h == nil || h.Config == nil || h.Config.ID == "") {
		err = errors.New("driver returned no task handle")
	}
	if err != nil {
		tr.updateLocal("cleared start intent", func(ls *state.LocalState) {
			ls.InvocationID, ls.StartIntent = "", nil
		})
		return nil, fmt.Errorf("start task %q: %w", task.Name, err)
	}
	tr.updateLocal("task handle", func(ls *state.LocalState) {
		ls.InvocationID, ls.TaskHandle, ls.StartIntent = invocation, h, nil
	})
	tr.mu.Lock()
	tr.starts++
	tr.mu.Unlock()
	tr.watchDriverEvents(h.Config.ID)
	tr.updateState(structs.TaskStateRunning, structs.NewTaskEvent(structs.TaskStarted))
	tr.mark(structs.StepTaskRunning)
	return h, nil
}

// mark records a step of the allocation's timeline (the first time only).
func (tr *TaskRunner) mark(step structs.TimelineStep) {
	if tr.timeline != nil {
		tr.timeline.Mark(tr.allocID, step)
	}
}

// buildTaskConfig builds the driver's TaskConfig for one invocation.
func (tr *TaskRunner) buildTaskConfig(alloc *structs.Allocation, task *structs.Task, invocation string) (*drivers.TaskConfig, error) {
	var raw json.RawMessage
	if task.Config != nil {
		b, err := json.Marshal(task.Config)
		if err != nil {
			return nil, fmt.Errorf("task %q: encode driver config: %w", task.Name, err)
		}
		raw = b
	}
	raw, env, err := driverView(raw, tr.resources.env, tr.driver.Capabilities(), tr.taskDir, tr.node, alloc)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", task.Name, err)
	}
	cfg := &drivers.TaskConfig{
		ID:            alloc.ID + "/" + task.Name + "/" + invocation,
		JobID:         alloc.JobID,
		TaskGroupName: alloc.TaskGroup,
		Name:          task.Name,
		Namespace:     alloc.Namespace,
		AllocID:       alloc.ID,
		User:          task.User,
		Env:           env,
		Resources:     taskResources(alloc, task),
		AllocDir:      tr.allocDir.AllocDir,
		TaskDir: drivers.TaskDir{
			Dir:        tr.taskDir.Dir,
			LocalDir:   tr.taskDir.LocalDir,
			SecretsDir: tr.taskDir.SecretsDir,
			SharedDir:  tr.taskDir.SharedDir,
			LogDir:     tr.taskDir.LogDir,
		},
		StdoutPath: tr.resources.stdoutPath,
		StderrPath: tr.resources.stderrPath,
		KillSignal: task.KillSignal,
		RawConfig:  raw,
		Devices:    tr.resources.devices,
		Mounts:     tr.resources.mounts,
		Ports:      driverPorts(alloc, task.Name), // ports.go
	}
	if n := tr.network(); n != nil {
		cfg.NetworkIsolation = n
	}
	if alloc.Job != nil {
		cfg.JobName = alloc.Job.Name
		// The mode as the group sets it: "" (no network block or no
		// mode) is host networking, left for the driver to tell apart.
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil && len(tg.Networks) > 0 && tg.Networks[0] != nil {
			cfg.NetworkMode = tg.Networks[0].Mode
		}
	}
	if lc := task.LogConfig; lc != nil {
		cfg.LogMaxFiles = lc.MaxFiles
		cfg.LogMaxFileSizeMB = lc.MaxFileSizeMB
	}
	return cfg, nil
}

// taskResources returns the task's limits: what the scheduler allocated,
// or what the task asked for.
func taskResources(alloc *structs.Allocation, task *structs.Task) *drivers.Resources {
	if ar := alloc.AllocatedResources; ar != nil {
		if tr := ar.Tasks[task.Name]; tr != nil {
			return &drivers.Resources{CPUShares: tr.Cpu.CpuShares, MemoryMB: tr.Memory.MemoryMB, MemoryMaxMB: tr.Memory.MemoryMaxMB}
		}
	}
	if r := task.Resources; r != nil {
		return &drivers.Resources{CPUShares: int64(r.CPU), MemoryMB: int64(r.MemoryMB), MemoryMaxMB: int64(r.MemoryMaxMB)}
	}
	return nil
}

// clearHandle forgets the task handle, start intent and invocation, in
// memory and in the StateDB; the hooks' states stay.
func (tr *TaskRunner) clearHandle() {
	var taskID string
	tr.updateLocal("cleared task handle", func(ls *state.LocalState) {
		if h := ls.TaskHandle; h != nil && h.Config != nil {
			taskID = h.Config.ID
		}
		ls.InvocationID, ls.TaskHandle, ls.StartIntent = "", nil, nil
	})
	tr.unwatchDriverEvents(taskID)
}

// updateLocal applies change to a copy of the local state, makes it the
// runner's, and persists it; what names the change in the error log. It
// returns the error of persisting, already logged.
func (tr *TaskRunner) updateLocal(what string, change func(ls *state.LocalState)) error {
	tr.persistMu.Lock()
	defer tr.persistMu.Unlock()
	tr.mu.Lock()
	ls := tr.local.Copy()
	change(ls)
	tr.local = ls
	snapshot := ls.Copy()
	tr.mu.Unlock()
	if err := tr.stateDB.PutTaskRunnerLocalState(tr.allocID, tr.taskName, snapshot); err != nil {
		tr.logger.Error("could not persist task local state", "change", what, "error", err)
		return err
	}
	return nil
}

// errNoExit is recorded when a driver never reports a task's exit.
var errNoExit = errors.New("driver did not report the task's exit")

// networkOf returns f, or a func returning nil when f is nil.
func networkOf(f func() *drivers.NetworkIsolationSpec) func() *drivers.NetworkIsolationSpec {
	if f == nil {
		return func() *drivers.NetworkIsolationSpec { return nil }
	}
	return f
}
