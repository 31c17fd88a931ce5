package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// Name is exec's name in job files.
const Name = "exec"

// handleVersion is the version of the DriverState format.
const handleVersion = 1

// defaultPollInterval is how often a re-attached task is checked.
const defaultPollInterval = 100 * time.Millisecond

// defaultStopSignal is StopTask's signal when neither the caller nor the
// task's kill_signal names one (Nomad's default).
const defaultStopSignal = syscall.SIGINT

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the exec task driver.
type Driver struct {
	logger       *slog.Logger
	opts         Options
	pollInterval time.Duration
	// initCommand returns how to run the isolation init stage
	// (isolation.DefaultInitCommand unless WithInitCommand).
	initCommand func() (isolation.InitCommand, error)
	// layout detects the host's cgroups (cheap: it reads mountinfo).
	layout func() (*isolation.CgroupLayout, error)
	// mhz is the host CPU clock for TaskStats, read once.
	mhz func() float64
	// fingerprintInterval is how often Fingerprint checks the host again.
	fingerprintInterval time.Duration
	// geteuid is os.Geteuid; tests fake it.
	geteuid func() int

	mu    sync.Mutex // guards the field below
	tasks map[string]*task
}

// task is one task the driver supervises.
type task struct {
	cfg  *drivers.TaskConfig
	proc *process
}

// driverState is exec's DriverState: enough to find the task again.
type driverState struct {
	Isolation isolation.State `json:"isolation"`
	StartedAt time.Time       `json:"started_at"`
}

// Option configures a Driver.
type Option func(*Driver)

// WithOptions sets the plugin options (DefaultOptions otherwise); unset
// fields keep their defaults.
func WithOptions(o Options) Option {
	return func(d *Driver) {
		def := DefaultOptions()
		if o.DefaultUser == "" {
			o.DefaultUser = def.DefaultUser
		}
		if o.CgroupParent == "" {
			o.CgroupParent = def.CgroupParent
		}
		d.opts = o
	}
}

// WithInitCommand makes the driver run the isolation init stage as `exe
// args...` instead of `<this executable> isolation-init`; tests pass the
// test binary, whose TestMain runs isolation.InitMain.
func WithInitCommand(exe string, args []string) Option {
	args = append([]string(nil), args...)
	return func(d *Driver) {
		d.initCommand = func() (isolation.InitCommand, error) {
			return isolation.InitCommand{Path: exe, Args: args}, nil
		}
	}
}

// New returns an exec driver.
func New(logger *slog.Logger, opts ...Option) *Driver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Driver{
		logger:              logger.With("driver", Name),
		opts:                DefaultOptions(),
		pollInterval:        defaultPollInterval,
		initCommand:         isolation.DefaultInitCommand,
		layout:              isolation.DetectCgroups,
		mhz:                 sync.OnceValue(cpuMHz),
		fingerprintInterval: defaultFingerprintInterval,
		geteuid:             os.Geteuid,
		tasks:               make(map[string]*task),
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name returns "exec".
func (d *Driver) Name() string { return Name }

// Capabilities reports signals, exec and chroot isolation.
func (d *Driver) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{SendSignals: true, Exec: true, FSIsolation: "chroot"}
}

// StartTask creates the task's cgroup and starts its command isolated.
// Errors in the task's config are not recoverable; failures of the host
// (cgroups, namespaces) are.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	fail := func(err error, recoverable bool) (*drivers.TaskHandle, error) {
		return nil, drivers.NewRecoverableError(fmt.Errorf("start task %q: %w", cfg.Name, err), recoverable)
	}
	env := rootEnv(cfg)
	conf, err := decodeConfig(cfg, env)
	if err != nil {
		return fail(err, false)
	}
	if cfg.TaskDir.Dir == "" || !filepath.IsAbs(cfg.TaskDir.Dir) {
		return fail(errors.New("the task has no absolute task directory to use as its root"), false)
	}
	userName := d.opts.DefaultUser
	if cfg.User != "" {
		if !d.opts.AllowUser {
			return fail(fmt.Errorf("the task sets user %q but the exec driver does not allow it: remove \"user\" or enable allow_user in the driver's plugin config", cfg.User), false)
		}
		userName = cfg.User
	}
	uid, gid, groups, err := isolation.LookupUser(userName)
	if err != nil {
		return fail(err, false)
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return fail(err, false)
	}
	layout, err := d.layout()
	if err != nil {
		return fail(err, true)
	}

	d.mu.Lock()
	if _, ok := d.tasks[cfg.ID]; ok {
		d.mu.Unlock()
		return fail(fmt.Errorf("task ID %q already started", cfg.ID), false)
	}
	// Reserve the ID while starting, outside the lock.
	d.tasks[cfg.ID] = nil
	d.mu.Unlock()
	release := func() {
		d.mu.Lock()
		delete(d.tasks, cfg.ID)
		d.mu.Unlock()
	}

	cg, err := isolation.NewCgroup(layout, isolation.CgroupConfig{
		Parent:    d.opts.CgroupParent,
		Name:      cgroupName(cfg),
		Resources: resources(cfg.Resources, d.opts.PidsLimit),
	})
	if err != nil {
		release()
		return fail(err, true)
	}
	proc, err := d.start(ctx, cfg, conf, env, initCmd, cg, uid, gid, groups)
	if err != nil {
		release()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
		if derr := cg.Destroy(dctx); derr != nil {
			d.logger.Warn("could not remove the cgroup of a task that failed to start",
				"alloc_id", cfg.AllocID, "task", cfg.Name, "error", derr)
		}
		cancel()
		return fail(err, false)
	}
	d.mu.Lock()
	d.tasks[cfg.ID] = &task{cfg: cfg, proc: proc}
	d.mu.Unlock()
	d.logger.Debug("task started", "alloc_id", cfg.AllocID, "task", cfg.Name, "pid", proc.st.Pid)

	state, err := json.Marshal(driverState{Isolation: proc.st, StartedAt: proc.startedAt})
	if err != nil {
		return nil, fmt.Errorf("start task %q: encode driver state: %w", cfg.Name, err)
	}
	return &drivers.TaskHandle{
		Version:     handleVersion,
		Config:      cfg,
		State:       drivers.TaskStateRunning,
		DriverState: state,
	}, nil
}

// start opens the task's logs and starts it in cg.
func (d *Driver) start(ctx context.Context, cfg *drivers.TaskConfig, conf *TaskConfig, env map[string]string,
	initCmd isolation.InitCommand, cg *isolation.Cgroup, uid, gid uint32, groups []uint32) (*process, error) {
	// The secrets dir is private to the task: its user must own it.
	if cfg.TaskDir.SecretsDir != "" {
		if err := os.Chown(cfg.TaskDir.SecretsDir, int(uid), int(gid)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("give the secrets dir to the task's user: %w", err)
		}
	}
	stdout, err := openLog(cfg.StdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := openLog(cfg.StderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	spec := &isolation.Spec{
		Path:    conf.Command,
		Args:    conf.Args,
		Env:     envList(env),
		Dir:     "/",
		RootDir: cfg.TaskDir.Dir,
		Mounts:  mounts(cfg, d.opts.ChrootEnv),
		NoPivot: d.opts.NoPivot,
		// Capabilities: nil is the default set.
		Capabilities: d.opts.Capabilities,
		UID:          uid,
		GID:          gid,
		Groups:       groups,
	}
	p, err := isolation.Start(ctx, initCmd, spec, cg, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return superviseChild(p, time.Now()), nil
}

// openLog opens path for appending, creating it and its directory; an
// empty path is /dev/null.
func openLog(path string) (*os.File, error) {
	if path == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return f, nil
}

// RecoverTask re-attaches to the task in the handle if its main process
// still runs (same pid and start time). A task that is gone has its
// cgroup removed and yields an error wrapping drivers.ErrTaskNotFound.
func (d *Driver) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return errors.New("recover task: handle without config")
	}
	var st driverState
	if err := json.Unmarshal(h.DriverState, &st); err != nil {
		return fmt.Errorf("recover task %q: decode driver state: %w", h.Config.Name, err)
	}
	d.mu.Lock()
	t, known := d.tasks[h.Config.ID]
	d.mu.Unlock()
	if known && t != nil {
		return nil // still supervised by this driver
	}
	proc, err := attach(st.Isolation, st.StartedAt, d.pollInterval)
	if err != nil {
		if cg := st.Isolation.Cgroup; cg != nil {
			dctx, cancel := context.WithTimeout(ctx, killTimeout)
			if derr := cg.Destroy(dctx); derr != nil {
				d.logger.Warn("could not remove the cgroup of a task that is gone",
					"alloc_id", h.Config.AllocID, "task", h.Config.Name, "error", derr)
			}
			cancel()
		}
		return fmt.Errorf("recover task %q: %w", h.Config.Name, err)
	}
	d.mu.Lock()
	d.tasks[h.Config.ID] = &task{cfg: h.Config, proc: proc}
	d.mu.Unlock()
	return nil
}

// WaitTask returns a channel that receives the task's ExitResult once and
// closes; if ctx is done first it closes without a value.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("wait task: %w", err)
	}
	ch := make(chan *drivers.ExitResult, 1)
	go func() {
		defer close(ch)
		select {
		case <-t.proc.done:
			ch <- t.proc.exitResult()
		case <-ctx.Done():
		}
	}()
	return ch, nil
}

// StopTask sends signal (else the task's kill_signal, else SIGINT) to every
// process of the task, waits up to timeout for it to exit, then SIGKILLs
// its cgroup. It is a no-op for a task that has exited.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("stop task: %w", err)
	}
	sig, err := stopSignal(signal, t.cfg.KillSignal)
	if err != nil {
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, err)
	}
	if err := t.proc.stop(ctx, sig, timeout); err != nil {
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, err)
	}
	return nil
}

// stopSignal picks StopTask's signal: the given one, the task's
// kill_signal, then SIGINT.
func stopSignal(signal, killSignal string) (syscall.Signal, error) {
	if signal == "" {
		signal = killSignal
	}
	if signal == "" {
		return defaultStopSignal, nil
	}
	return drivers.ParseSignal(signal)
}

// DestroyTask kills what is left of the task, removes its cgroup and
// forgets it; a running task is an error unless force.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("destroy task: %w", err)
	}
	if !t.proc.exitedYet() {
		if !force {
			return fmt.Errorf("destroy task %q: still running; stop it first or destroy with force", t.cfg.Name)
		}
		if err := t.proc.stop(ctx, syscall.SIGKILL, 0); err != nil {
			return fmt.Errorf("destroy task %q: %w", t.cfg.Name, err)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	if err := t.proc.st.Cgroup.Destroy(dctx); err != nil {
		return fmt.Errorf("destroy task %q: %w", t.cfg.Name, err)
	}
	d.mu.Lock()
	if d.tasks[taskID] == t {
		delete(d.tasks, taskID)
	}
	d.mu.Unlock()
	return nil
}

// InspectTask returns the task's status.
func (d *Driver) InspectTask(ctx context.Context, taskID string) (*drivers.TaskStatus, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("inspect task: %w", err)
	}
	st := &drivers.TaskStatus{
		ID:        taskID,
		Name:      t.cfg.Name,
		State:     drivers.TaskStateRunning,
		StartedAt: t.proc.startedAt,
		DriverAttributes: map[string]string{
			"pid":            strconv.Itoa(t.proc.st.Pid),
			"cgroup_version": strconv.Itoa(t.proc.st.Cgroup.Version),
		},
	}
	if res := t.proc.exitResult(); res != nil {
		st.State = drivers.TaskStateExited
		st.ExitResult = res
		st.CompletedAt = t.proc.exitTime()
	}
	return st, nil
}

// SignalTask sends signal ("SIGHUP", "HUP" or a number) to the task's main
// process, which gets it only if it handles it (it is PID 1 of its
// namespace).
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return fmt.Errorf("signal task %q: %w", t.cfg.Name, err)
	}
	if err := t.proc.signal(sig); err != nil {
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
