package rawexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
)

// Name is raw_exec's name in job files.
const Name = "raw_exec"

// Bounds of DestroyTask's wait for a shim to exit after its task did, so
// that its state dir can be removed.
const (
	shimExitTimeout = 5 * time.Second
	shimExitPoll    = 20 * time.Millisecond
)

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the raw_exec task driver.
type Driver struct {
	logger *slog.Logger
	// shimCommand returns the executable and leading arguments that start
	// a shim (a shim.Resolver's Command unless WithShimCommand).
	shimCommand func() (string, []string, error)
	// mhz is the host CPU clock for TaskStats, read once.
	mhz func() float64

	mu    sync.Mutex // guards the field below
	tasks map[string]*task
}

// task is one task the driver supervises through its shim.
type task struct {
	cfg *drivers.TaskConfig
	h   *shim.Handle
}

// Option configures a Driver.
type Option func(*Driver)

// WithShimCommand makes the driver start shims as `exe args... -state-dir
// <dir>` instead of `<this executable> shim -state-dir <dir>`; tests pass
// the test binary, whose TestMain runs shim.RunIfShim.
func WithShimCommand(exe string, args []string) Option {
	args = append([]string(nil), args...)
	return func(d *Driver) {
		d.shimCommand = func() (string, []string, error) { return exe, args, nil }
	}
}

// New returns a raw_exec driver.
func New(logger *slog.Logger, opts ...Option) *Driver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Driver{
		logger:      logger.With("driver", Name),
		shimCommand: (&shim.Resolver{}).Command, // asks drover-shim its identity once per version of it
		mhz:         sync.OnceValue(shim.HostCPUMHz),
		tasks:       make(map[string]*task),
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Capabilities reports signals and exec support, no isolation, and no
// mounts: raw_exec tasks see the host's filesystem as it is, so a
// volume_mount could only be ignored; jobs with one are refused instead.
func (d *Driver) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{SendSignals: true, Exec: true, FSIsolation: "none", MountConfigs: drivers.MountConfigSupportNone}
}

// Fingerprint sends one healthy fingerprint and closes the channel when ctx
// is done.
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint, 1)
	ch <- &drivers.Fingerprint{
		Attributes:        map[string]string{"driver." + Name: "1"},
		Health:            drivers.HealthStateHealthy,
		HealthDescription: "healthy",
	}
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// StartTask starts the task's command under a new shim and returns a
// handle whose DriverState locates the shim.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	spec, err := d.shimSpec(cfg)
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	exe, exeArgs, err := d.shimCommand()
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}

	d.mu.Lock()
	if _, ok := d.tasks[cfg.ID]; ok {
		d.mu.Unlock()
		return nil, fmt.Errorf("start task %q: task ID %q already started", cfg.Name, cfg.ID)
	}
	// Reserve the ID while starting, outside the lock.
	d.tasks[cfg.ID] = nil
	d.mu.Unlock()

	h, err := shim.Start(ctx, exe, exeArgs, spec)
	var state []byte
	if err == nil {
		state, err = encodeDriverState(h.State())
		if err != nil {
			// Not reachable with a State; do not leave the task running.
			_ = h.Stop(ctx, "SIGKILL", 0)
		}
	}
	d.mu.Lock()
	if err != nil {
		delete(d.tasks, cfg.ID)
	} else {
		d.tasks[cfg.ID] = &task{cfg: cfg, h: h}
	}
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	st := h.State()
	d.logger.Debug("task started", "alloc_id", cfg.AllocID, "task", cfg.Name,
		"pid", st.TaskPID, "shim_pid", st.ShimPID)
	return &drivers.TaskHandle{
		Version:     handleVersion,
		Config:      cfg,
		State:       drivers.TaskStateRunning,
		DriverState: state,
	}, nil
}

// shimSpec builds the shim's spec for cfg: the resolved command with
// interpolated args, the task's env, dir and user, the rotated log paths
// and the invocation's state dir.
func (d *Driver) shimSpec(cfg *drivers.TaskConfig) (*shim.Spec, error) {
	conf, err := decodeConfig(cfg)
	if err != nil {
		return nil, err
	}
	path, err := resolveCommand(conf.Command, cfg.TaskDir.Dir, cfg.Env)
	if err != nil {
		return nil, err
	}
	stdout, stderr, err := shim.LogBases(cfg)
	if err != nil {
		return nil, err
	}
	stateDir, err := shim.TaskStateDir(cfg)
	if err != nil {
		return nil, err
	}
	return &shim.Spec{
		ID:            cfg.ID,
		Command:       path,
		Args:          conf.Args,
		Env:           taskEnv(cfg.Env),
		Dir:           cfg.TaskDir.Dir,
		User:          cfg.User,
		StdoutPath:    stdout,
		StderrPath:    stderr,
		LogRoot:       cfg.AllocDir,
		MaxFiles:      max(cfg.LogMaxFiles, 0),
		MaxFileSizeMB: max(cfg.LogMaxFileSizeMB, 0),
		StateDir:      stateDir,
		SocketPath:    shim.SocketPathFor(stateDir),
		NetNSPath:     netnsPath(cfg),
	}, nil
}

// netnsPath is the allocation's network namespace the task joins (bridge
// and CNI modes), "" when it has none: the host's network.
func netnsPath(cfg *drivers.TaskConfig) string {
	if n := cfg.NetworkIsolation; n != nil {
		return n.Path
	}
	return ""
}

// RecoverTask re-attaches to the task's shim after an agent restart. A
// task that exited meanwhile is recovered too: WaitTask returns the exit
// the shim recorded. When the shim died without recording the exit, the
// task's leftovers are killed, the shim's state removed, and the error
// wraps drivers.ErrTaskNotFound and shim.ErrShimDied.
//
// A handle without DriverState is a start intent, which the client saves
// before StartTask: the agent died before it had the handle. The task is
// then found from its config alone, in the shim state dir that StartTask
// derives from the config (shim.FindTask): re-attached when its shim runs
// or ran (WaitTask reports the exit it recorded); an error wrapping
// drivers.ErrTaskNotFound and shim.ErrNotStarted when no shim started the
// task, and none will. A task whose shim died after starting it is
// recovered as well: its WaitTask reports that (shim.ShimDiedResult).
func (d *Driver) RecoverTask(ctx context.Context, th *drivers.TaskHandle) error {
	if th == nil || th.Config == nil || th.Config.ID == "" {
		return errors.New("recover task: handle without config")
	}
	cfg := th.Config
	d.mu.Lock()
	t, known := d.tasks[cfg.ID]
	d.mu.Unlock()
	if known && t != nil {
		return nil // still supervised by this driver
	}
	var h *shim.Handle
	if len(th.DriverState) == 0 {
		// A start intent: found by its config's ID (see RecoverTask).
		var err error
		h, err = shim.FindTask(ctx, cfg)
		if errors.Is(err, shim.ErrNotStarted) {
			return fmt.Errorf("recover task %q: %w: %w", cfg.Name, drivers.ErrTaskNotFound, err)
		}
		if err != nil {
			return fmt.Errorf("recover task %q: %w", cfg.Name, err)
		}
	} else {
		st, err := decodeDriverState(th)
		if err != nil {
			return fmt.Errorf("recover task %q: %w", cfg.Name, err)
		}
		h, err = shim.Attach(ctx, st)
		if errors.Is(err, shim.ErrShimDied) {
			d.removeShimState(cfg, st)
			return fmt.Errorf("recover task %q: %w: %w", cfg.Name, drivers.ErrTaskNotFound, err)
		}
		if err != nil {
			return fmt.Errorf("recover task %q: %w", cfg.Name, err)
		}
	}
	st := h.State()
	d.mu.Lock()
	if t := d.tasks[cfg.ID]; t != nil {
		d.mu.Unlock()
		return nil // recovered concurrently
	}
	d.tasks[cfg.ID] = &task{cfg: cfg, h: h}
	d.mu.Unlock()
	d.logger.Debug("task recovered", "alloc_id", cfg.AllocID, "task", cfg.Name,
		"pid", st.TaskPID, "shim_pid", st.ShimPID)
	return nil
}

// removeShimState removes the socket and state dir of a shim that Attach
// found dead (ErrShimDied): no handle exists to clean them up later.
// Only the paths this driver would have chosen for cfg are removed.
func (d *Driver) removeShimState(cfg *drivers.TaskConfig, st *shim.State) {
	if err := shim.RemoveDeadState(cfg, st); err != nil {
		d.logger.Warn("could not remove the state of a dead shim", "alloc_id", cfg.AllocID,
			"task", cfg.Name, "error", err)
	}
}

// WaitTask returns a channel that receives the task's ExitResult once and
// closes; if ctx is done first it closes without a value. When the shim
// died without recording the exit, the result's Err wraps
// shim.ErrShimDied.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("wait task: %w", err)
	}
	return t.h.WaitResult(ctx, t.cfg.Name), nil
}

// StopTask has the shim send signal (else the task's kill_signal, else
// SIGINT) to the task's process group and SIGKILL the group after timeout.
// It returns once the task no longer runs; it is a no-op for a task that
// has exited.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("stop task: %w", err)
	}
	sig := shim.StopSignal(signal, t.cfg.KillSignal)
	if _, err := drivers.ParseSignal(sig); err != nil {
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, err)
	}
	if err := t.h.Stop(ctx, sig, timeout); err != nil {
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, err)
	}
	return nil
}

// DestroyTask forgets the task and removes its shim's state; with force it
// kills a running task first, otherwise a running task is an error.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("destroy task: %w", err)
	}
	s, err := t.h.Status(ctx)
	switch {
	case errors.Is(err, shim.ErrShimDied):
		// Gone, and its leftovers killed: nothing runs.
	case err != nil:
		return fmt.Errorf("destroy task %q: %w", t.cfg.Name, err)
	case s.Exit == nil:
		if !force {
			return fmt.Errorf("destroy task %q: still running; stop it first or destroy with force", t.cfg.Name)
		}
		if err := t.h.Stop(ctx, "SIGKILL", 0); err != nil {
			return fmt.Errorf("destroy task %q: %w", t.cfg.Name, err)
		}
	}
	d.cleanup(ctx, t)
	d.mu.Lock()
	if d.tasks[taskID] == t {
		delete(d.tasks, taskID)
	}
	d.mu.Unlock()
	return nil
}

// cleanup removes the shim's state dir once the shim has exited, which it
// does right after its task's exit is recorded. A shim that takes longer
// than shimExitTimeout leaves its dir to the alloc dir's removal.
func (d *Driver) cleanup(ctx context.Context, t *task) {
	ctx, cancel := context.WithTimeout(ctx, shimExitTimeout)
	defer cancel()
	if err := t.h.CleanupAfterExit(ctx, shimExitPoll); err != nil {
		d.logger.Warn("could not remove the shim's state", "alloc_id", t.cfg.AllocID,
			"task", t.cfg.Name, "error", err)
	}
}

// InspectTask returns the task's status. A task whose shim died without
// recording its exit is reported exited, with an ExitResult whose Err
// wraps shim.ErrShimDied.
func (d *Driver) InspectTask(ctx context.Context, taskID string) (*drivers.TaskStatus, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("inspect task: %w", err)
	}
	st := t.h.State()
	status := &drivers.TaskStatus{
		ID:        taskID,
		Name:      t.cfg.Name,
		State:     drivers.TaskStateRunning,
		StartedAt: st.StartedAt,
		DriverAttributes: map[string]string{
			"pid":      strconv.Itoa(st.TaskPID),
			"shim_pid": strconv.Itoa(st.ShimPID),
		},
	}
	s, err := t.h.Status(ctx)
	switch {
	case errors.Is(err, shim.ErrShimDied):
		status.State = drivers.TaskStateExited
		status.ExitResult = shim.ShimDiedResult(t.cfg.Name, err)
	case err != nil:
		return nil, fmt.Errorf("inspect task %q: %w", t.cfg.Name, err)
	case s.Exit != nil:
		status.State = drivers.TaskStateExited
		status.ExitResult = s.Exit.ExitResult()
		status.CompletedAt = s.Exit.ExitedAt
	}
	return status, nil
}

// SignalTask sends signal ("SIGHUP", "HUP" or a number) to the task's main
// process. It fails once the task has exited.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	if err := t.h.Signal(ctx, signal); err != nil {
		return fmt.Errorf("signal task %q: %w", t.cfg.Name, err)
	}
	return nil
}

func (d *Driver) task(id string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tasks[id]
	if t == nil {
		return nil, fmt.Errorf("task %q: %w", id, drivers.ErrTaskNotFound)
	}
	return t, nil
}
