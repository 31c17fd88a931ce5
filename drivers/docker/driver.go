package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// Name is the docker driver's name in job files.
const Name = "docker"

// handleVersion is the version of the DriverState format.
const handleVersion = 1

// destroyWaitTimeout bounds how long DestroyTask waits for a killed
// container's exit to be recorded before removing it.
const destroyWaitTimeout = 10 * time.Second

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the docker task driver. Create it with New and call Shutdown
// when the agent stops: that ends the driver's goroutines and leaves the
// containers running for a later RecoverTask.
type Driver struct {
	logger *slog.Logger
	config *Config
	client *client
	auth   authSource
	gc     *imageGC
	// cpuMHz is the host's per-core MHz (cpu_hard_limit quotas).
	cpuMHz func() float64
	// infraSem serializes making the infra image present (network.go).
	infraSem chan struct{}

	// ctx is the parent of every task's goroutines; cancel ends them.
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex // guards the fields below
	tasks map[string]*task
}

// driverState is the docker driver's DriverState.
type driverState struct {
	ContainerID string `json:"container_id"`
	Image       string `json:"image"`
	// ImageManaged: the driver pulled or loaded Image, so image GC may
	// remove it once unused (absent in older handles: never removed).
	ImageManaged bool `json:"image_managed,omitempty"`
}

// New returns a docker driver configured by cfg (DefaultConfig when nil).
// It does not contact the daemon: Fingerprint reports whether it is there.
func New(logger *slog.Logger, cfg *Config) (*Driver, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg == nil {
		cfg = DefaultConfig()
	} else {
		c := *cfg
		c.setDefaults()
		cfg = &c
	}
	logger = logger.With("driver", Name)
	tlsConf, err := clientTLS(cfg, logger)
	if err != nil {
		return nil, err
	}
	cl, err := newClient(cfg.Endpoint, tlsConf)
	if err != nil {
		return nil, err
	}
	if time.Duration(cfg.PullActivityTimeout) < minPullActivityTimeout {
		logger.Warn("pull_activity_timeout is below its minimum; using the minimum", "pull_activity_timeout", time.Duration(cfg.PullActivityTimeout), "minimum", minPullActivityTimeout)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Driver{
		logger:   logger,
		config:   cfg,
		client:   cl,
		auth:     authSource{configFile: cfg.Auth.Config, helper: cfg.Auth.Helper},
		gc:       newImageGC(cl, time.Duration(cfg.GC.ImageDelay), cfg.gcImage(), logger),
		cpuMHz:   sync.OnceValue(hostCPUMHz),
		infraSem: make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		tasks:    make(map[string]*task),
	}, nil
}

// Shutdown stops watching the tasks' containers (without stopping them)
// and waits for the driver's goroutines to return.
func (d *Driver) Shutdown() {
	d.cancel()
	d.mu.Lock()
	tasks := make([]*task, 0, len(d.tasks))
	for _, t := range d.tasks {
		if t != nil {
			tasks = append(tasks, t)
		}
	}
	d.mu.Unlock()
	for _, t := range tasks {
		t.stop()
	}
	d.gc.stop()
	d.client.close()
}

// Name returns "docker".
func (d *Driver) Name() string { return Name }

// Capabilities reports signals and exec support, image isolation,
// mounts (TaskConfig.Mounts become bind mounts) and that it makes the
// network namespace of a bridge or CNI group (network.go).
func (d *Driver) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{SendSignals: true, Exec: true, FSIsolation: "image", MountConfigs: drivers.MountConfigSupportAll, MustInitiateNetwork: true}
}

// StartTask ensures the image is present (pulling only a missing one),
// creates and starts the container, and starts copying its output.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	env := containerEnv(cfg.Env)
	conf, err := decodeTaskConfig(cfg, env)
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	spec, err := buildSpec(cfg, conf, env, specInput{plugin: d.config, cpuMHz: d.cpuMHz()})
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}

	d.mu.Lock()
	if _, ok := d.tasks[cfg.ID]; ok {
		d.mu.Unlock()
		return nil, fmt.Errorf("start task %q: task ID %q already started", cfg.Name, cfg.ID)
	}
	d.tasks[cfg.ID] = nil // reserve the ID while starting, outside the lock
	d.mu.Unlock()

	t, err := d.startContainer(ctx, cfg, conf, spec)
	if err == nil {
		// Started before it is published, so that no other call sees a
		// task whose goroutines are not running yet.
		t.run(d.ctx, d.client, d.taskLogger(cfg), logStart{})
	}
	d.mu.Lock()
	if err != nil {
		delete(d.tasks, cfg.ID)
	} else {
		d.tasks[cfg.ID] = t
	}
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	d.taskLogger(cfg).Debug("container started", "container_id", shortID(t.containerID), "image", t.image)

	state, err := json.Marshal(driverState{ContainerID: t.containerID, Image: t.image, ImageManaged: t.imageManaged})
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

// startContainer makes the image present, creates the container
// (replacing a leftover of the same name) and starts it. The task holds
// its image against image GC from the start; a failed start lets go.
func (d *Driver) startContainer(ctx context.Context, cfg *drivers.TaskConfig, conf *TaskConfig, spec *containerCreate) (*task, error) {
	if err := d.gc.use(ctx, spec.Image, cfg.ID); err != nil {
		return nil, fmt.Errorf("wait for the removal of image %q: %w", spec.Image, err)
	}
	t, err := d.createAndStart(ctx, cfg, conf, spec)
	if err != nil {
		d.gc.release(spec.Image, cfg.ID)
	}
	return t, err
}

func (d *Driver) createAndStart(ctx context.Context, cfg *drivers.TaskConfig, conf *TaskConfig, spec *containerCreate) (*task, error) {
	img, err := d.ensureImage(ctx, cfg, conf)
	if err != nil {
		return nil, err
	}
	if img.managed {
		d.gc.markManaged(img.ref)
	}
	name := containerName(cfg.Name, cfg.AllocID)
	id, err := d.client.createContainer(ctx, name, spec)
	if isConflict(err) {
		// A container of this name is a leftover of an earlier attempt at
		// this task (an agent that died before persisting the handle, or
		// one kept by gc { container = false }).
		d.taskLogger(cfg).Info("removing leftover container", "container", name)
		if err := d.client.removeContainer(ctx, name, true); err != nil {
			return nil, fmt.Errorf("remove leftover container %q: %w", name, err)
		}
		id, err = d.client.createContainer(ctx, name, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("create container: %w", err)
	}
	if err := d.client.startContainer(ctx, id); err != nil {
		// Best effort: the container never ran.
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = d.client.removeContainer(rmCtx, id, true)
		return nil, fmt.Errorf("start container: %w", err)
	}
	t := &task{
		cfg:          cfg,
		containerID:  id,
		image:        img.ref,
		imageManaged: img.managed,
		startedAt:    time.Now(),
		done:         make(chan struct{}),
		logsDone:     make(chan struct{}),
	}
	info, err := d.client.inspectContainer(ctx, id)
	if err == nil {
		if at := parseDockerTime(info.State.StartedAt); !at.IsZero() {
			t.startedAt = at
		}
	}
	if len(spec.HostConfig.PortBindings) > 0 {
		if err == nil {
			err = checkPublished(spec.HostConfig.PortBindings, info) // ports.go
		}
		if err != nil {
			// A task reachable on none of its ports must not run.
			rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = d.client.removeContainer(rmCtx, id, true)
			return nil, fmt.Errorf("publish ports: %w", err)
		}
	}
	return t, nil
}

// RecoverTask re-attaches to the container in the handle: it watches for
// its exit again and resumes copying its output after what was copied.
func (d *Driver) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return errors.New("recover task: handle without config")
	}
	if len(h.DriverState) == 0 {
		// A start intent (the agent died during StartTask): a new start
		// replaces any container of the task's name, so none runs twice.
		return fmt.Errorf("recover task %q: no container recorded for the interrupted start: %w", h.Config.Name, drivers.ErrTaskNotFound)
	}
	if h.Version != handleVersion {
		return fmt.Errorf("recover task %q: driver state version %d, want %d", h.Config.Name, h.Version, handleVersion)
	}
	var st driverState
	if err := json.Unmarshal(h.DriverState, &st); err != nil {
		return fmt.Errorf("recover task %q: decode driver state: %w", h.Config.Name, err)
	}
	if st.ContainerID == "" {
		return fmt.Errorf("recover task %q: driver state has no container ID", h.Config.Name)
	}
	d.mu.Lock()
	if _, known := d.tasks[h.Config.ID]; known {
		d.mu.Unlock()
		return nil // still watched by this driver, or being recovered
	}
	d.tasks[h.Config.ID] = nil // reserve the ID while recovering
	d.mu.Unlock()

	t, err := d.attach(ctx, h.Config, &st)
	d.mu.Lock()
	if err != nil {
		delete(d.tasks, h.Config.ID)
	} else {
		d.tasks[h.Config.ID] = t
	}
	d.mu.Unlock()
	return err
}

// attach finds a recovered task's container and starts watching it.
func (d *Driver) attach(ctx context.Context, cfg *drivers.TaskConfig, st *driverState) (*task, error) {
	info, err := d.client.inspectContainer(ctx, st.ContainerID)
	if isNotFound(err) {
		return nil, fmt.Errorf("recover task %q: container %s is gone: %w", cfg.Name, shortID(st.ContainerID), drivers.ErrTaskNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("recover task %q: inspect container %s: %w", cfg.Name, shortID(st.ContainerID), err)
	}
	t := &task{
		cfg:          cfg,
		containerID:  info.ID,
		image:        st.Image,
		imageManaged: st.ImageManaged,
		startedAt:    parseDockerTime(info.State.StartedAt),
		done:         make(chan struct{}),
		logsDone:     make(chan struct{}),
	}
	if st.Image != "" {
		if err := d.gc.use(ctx, st.Image, cfg.ID); err != nil {
			return nil, fmt.Errorf("recover task %q: %w", cfg.Name, err)
		}
		if st.ImageManaged {
			d.gc.markManaged(st.Image)
		}
	}
	t.run(d.ctx, d.client, d.taskLogger(cfg), recoveredLogStart(cfg, info.ID))
	return t, nil
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
		case <-t.done:
			res, _ := t.exitResult()
			ch <- res
		case <-ctx.Done():
		}
	}()
	return ch, nil
}

// StopTask sends signal (the task's kill_signal, then SIGTERM, by default)
// to the container, waits up to timeout for it to exit, then kills it. It
// is a no-op for a container that has exited.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("stop task: %w", err)
	}
	sig, err := stopSignal(signal, t.cfg.KillSignal)
	if err != nil {
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, err)
	}
	if t.exited() {
		return nil
	}
	t.markStopSignalled()
	if err := d.client.killContainer(ctx, t.containerID, strconv.Itoa(int(sig))); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop task %q: send %v: %w", t.cfg.Name, sig, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, ctx.Err())
	case <-timer.C:
	}
	if err := d.client.killContainer(ctx, t.containerID, strconv.Itoa(int(syscall.SIGKILL))); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop task %q: kill: %w", t.cfg.Name, err)
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop task %q: %w", t.cfg.Name, ctx.Err())
	}
}

// DestroyTask removes the container (killing it first with force; a
// running container is an error otherwise) and forgets the task.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("destroy task: %w", err)
	}
	if !t.exited() {
		if !force {
			info, err := d.client.inspectContainer(ctx, t.containerID)
			if err == nil && info.State.Running {
				return fmt.Errorf("destroy task %q: %w", t.cfg.Name, errStillRunning)
			}
		}
		// Kill it and let the watcher record the exit, so that waiters
		// get a result, before the container goes.
		t.markStopSignalled()
		if err := d.client.killContainer(ctx, t.containerID, strconv.Itoa(int(syscall.SIGKILL))); err != nil && !isNotFound(err) {
			return fmt.Errorf("destroy task %q: kill: %w", t.cfg.Name, err)
		}
		timer := time.NewTimer(destroyWaitTimeout)
		select {
		case <-t.done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	if d.config.gcContainer() {
		if err := d.client.removeContainer(ctx, t.containerID, true); err != nil {
			return fmt.Errorf("destroy task %q: remove container %s: %w", t.cfg.Name, shortID(t.containerID), err)
		}
	}
	t.stop()
	d.mu.Lock()
	forget := d.tasks[taskID] == t
	if forget {
		delete(d.tasks, taskID)
	}
	d.mu.Unlock()
	if forget {
		d.gc.release(t.image, taskID)
	}
	return nil
}

// InspectTask returns the task's status as last seen.
func (d *Driver) InspectTask(ctx context.Context, taskID string) (*drivers.TaskStatus, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("inspect task: %w", err)
	}
	st := &drivers.TaskStatus{
		ID:        taskID,
		Name:      t.cfg.Name,
		State:     drivers.TaskStateRunning,
		StartedAt: t.startedAt,
		DriverAttributes: map[string]string{
			"container_id": t.containerID,
			"image":        t.image,
		},
	}
	if res, at := t.exitResult(); res != nil {
		st.State = drivers.TaskStateExited
		st.ExitResult = res
		st.CompletedAt = at
	}
	return st, nil
}

// SignalTask sends signal ("SIGHUP", "HUP" or a number) to the container's
// main process.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return fmt.Errorf("signal task %q: %w", t.cfg.Name, err)
	}
	if err := d.client.killContainer(ctx, t.containerID, strconv.Itoa(int(sig))); err != nil {
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

func (d *Driver) taskLogger(cfg *drivers.TaskConfig) *slog.Logger {
	return d.logger.With("alloc_id", cfg.AllocID, "task", cfg.Name)
}
