package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/drover-io/drover/drivers/shared/beneath"
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
)

// Name is exec's name in job files.
const Name = "exec"

// Bounds of DestroyTask's wait for a shim to exit after its task did, so
// that its state dir can be removed.
const (
	shimExitTimeout = 5 * time.Second
	shimExitPoll    = 20 * time.Millisecond
)

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the exec task driver.
type Driver struct {
	logger *slog.Logger
	opts   Options
	// initCommand returns how to run the isolation init stage, for a
	// task and for every exec session in one (a shim.Resolver's
	// InitCommand: drover-shim where it lies beside drover, unless
	// WithInitCommand).
	initCommand func() (isolation.InitCommand, error)
	// shimCommand returns the executable and leading arguments that start
	// a shim (the same Resolver's Command unless WithShimCommand).
	shimCommand func() (string, []string, error)
	// layout detects the host's cgroups (cheap: it reads mountinfo).
	layout func() (*isolation.CgroupLayout, error)
	// mhz is the host CPU clock for TaskStats, read once.
	mhz func() float64
	// fingerprintInterval is how often Fingerprint checks the host again.
	fingerprintInterval time.Duration
	// geteuid is os.Geteuid; tests fake it.
	geteuid func() int
	// userNamespaces says whether tasks can have user namespaces here
	// (probeUserNamespaces, once); tests fake it.
	userNamespaces func() error
	// usernsWarning logs, once, that tasks get no user namespace.
	usernsWarning sync.Once

	mu    sync.Mutex // guards the field below
	tasks map[string]*task
}

// task is one task the driver supervises through its shim.
type task struct {
	cfg *drivers.TaskConfig
	h   *shim.Handle

	userMu sync.Mutex   // guards the field below
	user   *execUserIDs // the task's user, looked up by the first exec session
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
// args...` instead of `drover-shim isolation-init` (or `<this executable>
// isolation-init` where no drover-shim of the same build lies beside it);
// tests pass the test binary, whose TestMain runs isolation.InitMain.
func WithInitCommand(exe string, args []string) Option {
	args = append([]string(nil), args...)
	return func(d *Driver) {
		d.initCommand = func() (isolation.InitCommand, error) {
			return isolation.InitCommand{Path: exe, Args: args}, nil
		}
	}
}

// WithShimCommand makes the driver start shims as `exe args... -state-dir
// <dir>` instead of `<this executable> shim -state-dir <dir>`; tests pass
// the test binary, whose TestMain runs shim.RunIfShim.
func WithShimCommand(exe string, args []string) Option {
	args = append([]string(nil), args...)
	return func(d *Driver) {
		d.shimCommand = func() (string, []string, error) { return exe, args, nil }
	}
}

// New returns an exec driver.
func New(logger *slog.Logger, opts ...Option) *Driver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	binaries := &shim.Resolver{} // finds drover-shim once per version of it
	d := &Driver{
		logger:              logger.With("driver", Name),
		opts:                DefaultOptions(),
		initCommand:         binaries.InitCommand,
		shimCommand:         binaries.Command,
		layout:              isolation.DetectCgroups,
		mhz:                 sync.OnceValue(shim.HostCPUMHz),
		fingerprintInterval: defaultFingerprintInterval,
		geteuid:             os.Geteuid,
		tasks:               make(map[string]*task),
	}
	for _, o := range opts {
		o(d)
	}
	d.userNamespaces = sync.OnceValue(d.probeUserNamespaces)
	return d
}

// probeUserNamespaces checks that the kernel offers user namespaces and
// that the init stage starts in one (a seccomp profile around the agent
// may refuse them).
func (d *Driver) probeUserNamespaces() error {
	if err := isolation.UserNamespaces(); err != nil {
		return err
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return isolation.ProbeUserNS(ctx, initCmd)
}

// Name returns "exec".
func (d *Driver) Name() string { return Name }

// Capabilities reports signals, exec, chroot isolation and mounts (host
// volumes and device mounts are bound into the task's root: mounts.go).
func (d *Driver) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{SendSignals: true, Exec: true, FSIsolation: "chroot", MountConfigs: drivers.MountConfigSupportAll}
}

// StartTask starts the task isolated under a new shim: the shim creates
// the task's cgroup and starts the command in it through the isolation
// init stage. The returned handle's DriverState locates the shim. Errors
// in the task's config are not recoverable; a host without usable cgroups
// is.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	fail := func(err error, recoverable bool) (*drivers.TaskHandle, error) {
		return nil, drivers.NewRecoverableError(fmt.Errorf("start task %q: %w", cfg.Name, err), recoverable)
	}
	spec, uid, gid, err := d.shimSpec(cfg)
	if err != nil {
		return fail(err, false)
	}
	exe, exeArgs, err := d.shimCommand()
	if err != nil {
		return fail(err, false)
	}
	if _, err := d.layout(); err != nil {
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

	var h *shim.Handle
	var state []byte
	// The secrets dir is private to the task: its user must own it.
	err = chownSecrets(cfg, uid, gid)
	if err == nil {
		h, err = shim.Start(ctx, exe, exeArgs, spec)
	}
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
		if h == nil {
			// No shim runs: its spec (the task's env) goes.
			_ = os.RemoveAll(spec.StateDir)
		}
		return fail(err, false)
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

// shimSpec builds the shim's spec for cfg: the isolation spec (command
// and environment as seen inside the root, mounts, user), the cgroup, the
// rotated log paths and the invocation's state dir. It also returns the
// task's uid and gid as the host sees them (in a user namespace, root in
// the task is nobody on the host).
func (d *Driver) shimSpec(cfg *drivers.TaskConfig) (*shim.Spec, uint32, uint32, error) {
	env := rootEnv(cfg)
	conf, err := decodeConfig(cfg, env)
	if err != nil {
		return nil, 0, 0, err
	}
	if cfg.TaskDir.Dir == "" || !filepath.IsAbs(cfg.TaskDir.Dir) {
		return nil, 0, 0, errors.New("the task has no absolute task directory to use as its root")
	}
	userName := d.opts.DefaultUser
	if cfg.User != "" {
		if !d.opts.AllowUser {
			return nil, 0, 0, fmt.Errorf("the task sets user %q but the exec driver does not allow it: remove \"user\" or enable allow_user in the driver's plugin config", cfg.User)
		}
		userName = cfg.User
	}
	uid, gid, groups, err := isolation.LookupUser(userName)
	if err != nil {
		return nil, 0, 0, err
	}
	userNS := d.userNS(uid, gid, groups)
	hostUID, hostGID := uid, gid
	if userNS != nil {
		hostUID, _ = userNS.HostUID(uid)
		hostGID, _ = userNS.HostGID(gid)
	}
	netIsolated, netns, err := networkIsolation(cfg.NetworkMode, cfg.NetworkIsolation)
	if err != nil {
		return nil, 0, 0, err
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return nil, 0, 0, err
	}
	stdout, stderr, err := shim.LogBases(cfg)
	if err != nil {
		return nil, 0, 0, err
	}
	stateDir, err := shim.TaskStateDir(cfg)
	if err != nil {
		return nil, 0, 0, err
	}
	hostname, nsMounts, err := namespaceSettings(cfg.NetworkIsolation, stateDir) // network.go
	if err != nil {
		return nil, 0, 0, err
	}
	return &shim.Spec{
		ID:            cfg.ID,
		StdoutPath:    stdout,
		StderrPath:    stderr,
		LogRoot:       cfg.AllocDir,
		MaxFiles:      max(cfg.LogMaxFiles, 0),
		MaxFileSizeMB: max(cfg.LogMaxFileSizeMB, 0),
		StateDir:      stateDir,
		SocketPath:    shim.SocketPathFor(stateDir),
		NetNSPath:     netns,
		Isolation: &shim.Isolation{
			Spec: isolation.Spec{
				Path:    conf.Command,
				Args:    conf.Args,
				Env:     envList(env),
				Dir:     "/",
				RootDir: cfg.TaskDir.Dir,
				Mounts:  append(append(mounts(cfg, d.opts.ChrootEnv), nsMounts...), taskMounts(cfg)...), // mounts.go
				Devices: deviceNodes(cfg),
				NoPivot: d.opts.NoPivot,
				// Capabilities: nil is the default set.
				Capabilities:     d.opts.Capabilities,
				UID:              uid,
				GID:              gid,
				Groups:           groups,
				UserNS:           userNS,
				NetworkIsolation: netIsolated,
				Hostname:         hostname,
			},
			Cgroup: isolation.CgroupConfig{
				Parent:    d.opts.CgroupParent,
				Name:      cgroupName(cfg),
				Resources: resources(cfg.Resources, d.opts.PidsLimit),
			},
			Init: &initCmd,
		},
	}, hostUID, hostGID, nil
}

// userNS returns the user namespace of a task that runs as uid, gid and
// groups: nil without the user_namespace option, or where the kernel
// does not allow one (logged once).
func (d *Driver) userNS(uid, gid uint32, groups []uint32) *isolation.UserNS {
	if !d.opts.UserNamespace {
		return nil
	}
	if err := d.userNamespaces(); err != nil {
		d.usernsWarning.Do(func() {
			d.logger.Warn("exec tasks run without a user namespace: root in a task is root on the host (with the allowed capabilities only)", "error", err)
		})
		return nil
	}
	// Root in the task is nobody on the host.
	rootUID, rootGID, _, err := isolation.LookupUser(isolation.DefaultUser)
	if err != nil {
		rootUID, rootGID = overflowID, overflowID
	}
	return isolation.NewUserNS(uid, gid, groups, rootUID, rootGID)
}

// overflowID is the kernel's ID for an unmapped user or group (nobody),
// used where the host has no "nobody" user.
const overflowID = 65534

// chownSecrets gives the task's secrets dir to its user. The dir is
// changed beneath its parent without following a link: a link planted in
// its place is refused, not followed.
func chownSecrets(cfg *drivers.TaskConfig, uid, gid uint32) error {
	if cfg.TaskDir.SecretsDir == "" {
		return nil
	}
	parent, err := beneath.OpenRoot(filepath.Dir(cfg.TaskDir.SecretsDir))
	if err == nil {
		err = parent.Chown(filepath.Base(cfg.TaskDir.SecretsDir), int(uid), int(gid))
		parent.Close()
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("give the secrets dir to the task's user: %w", err)
	}
	return nil
}

// RecoverTask re-attaches to the task's shim after an agent restart. A
// task that exited meanwhile is recovered too: WaitTask returns the exit
// the shim recorded (OOMKilled included). When the shim died without
// recording the exit, the task's cgroup is destroyed (nothing of the task
// runs on), the shim's state removed, and the error wraps
// drivers.ErrTaskNotFound and shim.ErrShimDied.
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
// found dead (ErrShimDied), and the task's cgroup if still there: no
// handle exists to clean them up later. Only the paths this driver would
// have chosen for cfg are removed.
func (d *Driver) removeShimState(cfg *drivers.TaskConfig, st *shim.State) {
	if st.Cgroup != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shimExitTimeout)
		err := st.Cgroup.Destroy(ctx)
		cancel()
		if err != nil {
			d.logger.Warn("could not remove the cgroup of a task whose shim died", "alloc_id", cfg.AllocID,
				"task", cfg.Name, "error", err)
		}
	}
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
// SIGINT) to every process of the task's cgroup and SIGKILL the cgroup
// after timeout. The task's main process is PID 1 of its namespace: it
// gets the signal only if it handles it, else it is killed at the timeout.
// StopTask returns once the task no longer runs; it is a no-op for a task
// that has exited.
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

// DestroyTask forgets the task and removes its shim's state and its cgroup
// (which the shim removes itself once the task exited); with force it
// kills a running task first, otherwise a running task is an error.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("destroy task: %w", err)
	}
	s, err := t.h.Status(ctx)
	switch {
	case errors.Is(err, shim.ErrShimDied):
		// Gone, and its cgroup destroyed: nothing runs.
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

// cleanup removes the shim's state dir (and the cgroup, should it remain)
// once the shim has exited, which it does right after its task's exit is
// recorded. A shim that takes longer than shimExitTimeout leaves its dir
// to the alloc dir's removal.
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
			"pid":            strconv.Itoa(st.TaskPID),
			"shim_pid":       strconv.Itoa(st.ShimPID),
			"cgroup_version": strconv.Itoa(st.Cgroup.Version),
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
// process, which gets it only if it handles it (it is PID 1 of its
// namespace). It fails once the task has exited.
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
