package rawexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// Name is raw_exec's name in job files.
const Name = "raw_exec"

// handleVersion is the version of the DriverState format.
const handleVersion = 1

// defaultPollInterval is how often a re-attached process is checked.
const defaultPollInterval = 100 * time.Millisecond

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the raw_exec task driver.
type Driver struct {
	logger       *slog.Logger
	pollInterval time.Duration
	// mhz is the host CPU clock for TaskStats, read once.
	mhz func() float64

	mu    sync.Mutex // guards the fields below
	tasks map[string]*task
}

// task is one task the driver supervises.
type task struct {
	cfg  *drivers.TaskConfig
	proc *process
}

// driverState is raw_exec's DriverState: enough to find the process again.
type driverState struct {
	Pid       int       `json:"pid"`
	StartTime uint64    `json:"start_time"` // /proc starttime, clock ticks after boot
	StartedAt time.Time `json:"started_at"`
}

// New returns a raw_exec driver.
func New(logger *slog.Logger) *Driver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{
		logger:       logger.With("driver", Name),
		pollInterval: defaultPollInterval,
		mhz:          sync.OnceValue(cpuMHz),
		tasks:        make(map[string]*task),
	}
}

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Capabilities reports signals and exec support and no isolation.
func (d *Driver) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{SendSignals: true, Exec: true, FSIsolation: "none"}
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

// StartTask starts the task's command.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	conf, err := decodeConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	path, err := resolveCommand(conf.Command, cfg.TaskDir.Dir, cfg.Env)
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

	proc, err := startProcess(&processSpec{
		Path:       path,
		Args:       conf.Args,
		Env:        taskEnv(cfg.Env),
		Dir:        cfg.TaskDir.Dir,
		StdoutPath: cfg.StdoutPath,
		StderrPath: cfg.StderrPath,
		User:       cfg.User,
	})
	d.mu.Lock()
	if err != nil {
		delete(d.tasks, cfg.ID)
	} else {
		d.tasks[cfg.ID] = &task{cfg: cfg, proc: proc}
	}
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	d.logger.Debug("task started", "alloc_id", cfg.AllocID, "task", cfg.Name, "pid", proc.pid)

	state, err := json.Marshal(driverState{Pid: proc.pid, StartTime: proc.startTime, StartedAt: proc.startedAt})
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

// RecoverTask re-attaches to the process in the handle if it still runs.
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
	proc, err := attachProcess(st.Pid, st.StartTime, st.StartedAt, d.pollInterval)
	if err != nil {
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

// StopTask sends signal (the task's kill_signal, then SIGINT, by default)
// to the task's process group, waits up to timeout, then kills the group.
// It is a no-op for a task that has exited.
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
		return syscall.SIGINT, nil
	}
	return drivers.ParseSignal(signal)
}

// DestroyTask forgets the task; with force it kills a running task first,
// otherwise a running task is an error. What the task left in its process
// group is killed.
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
	t.proc.killGroup()
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
		ID:               taskID,
		Name:             t.cfg.Name,
		State:            drivers.TaskStateRunning,
		StartedAt:        t.proc.startedAt,
		DriverAttributes: map[string]string{"pid": fmt.Sprint(t.proc.pid)},
	}
	if res := t.proc.exitResult(); res != nil {
		st.State = drivers.TaskStateExited
		st.ExitResult = res
		st.CompletedAt = t.proc.exitTime()
	}
	return st, nil
}

// SignalTask sends signal ("SIGHUP", "HUP" or a number) to the task's
// process group.
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
