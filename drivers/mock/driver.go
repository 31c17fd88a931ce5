package mock

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

// Name is the mock driver's name in job files.
const Name = "mock_driver"

// handleVersion is the version of the DriverState format.
const handleVersion = 1

var _ drivers.DriverPlugin = (*Driver)(nil)

// Driver is the mock task driver. Its tasks live in memory.
type Driver struct {
	logger *slog.Logger
	// wg tracks task goroutines so Shutdown can wait for them.
	wg sync.WaitGroup

	mu    sync.Mutex // guards the fields below
	tasks map[string]*task
}

// New returns a mock driver.
func New(logger *slog.Logger) *Driver {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{
		logger: logger.With("driver", Name),
		tasks:  make(map[string]*task),
	}
}

// driverState is the mock's DriverState: enough to identify the task.
type driverState struct {
	TaskID    string    `json:"task_id"`
	StartedAt time.Time `json:"started_at"`
}

// Name returns "mock_driver".
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

// StartTask starts a mock task as its config says.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil || cfg.ID == "" {
		return nil, errors.New("start task: missing task config or ID")
	}
	conf := &TaskConfig{}
	if err := cfg.DecodeDriverConfig(conf); err != nil {
		return nil, fmt.Errorf("start task %q: %w", cfg.Name, err)
	}
	if conf.StartBlockFor > 0 {
		timer := time.NewTimer(time.Duration(conf.StartBlockFor))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("start task %q: %w", cfg.Name, ctx.Err())
		}
	}
	if conf.StartErr != "" {
		return nil, drivers.NewRecoverableError(errors.New(conf.StartErr), conf.StartErrRecoverable)
	}

	t := newTask(cfg, conf, time.Now())
	d.mu.Lock()
	if _, ok := d.tasks[cfg.ID]; ok {
		d.mu.Unlock()
		return nil, fmt.Errorf("start task %q: task ID %q already started", cfg.Name, cfg.ID)
	}
	d.tasks[cfg.ID] = t
	d.wg.Add(1)
	d.mu.Unlock()

	logger := d.logger.With("alloc_id", cfg.AllocID, "task", cfg.Name)
	go func() {
		defer d.wg.Done()
		t.run(logger.Warn)
	}()

	state, err := json.Marshal(driverState{TaskID: cfg.ID, StartedAt: t.startedAt})
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

// RecoverTask succeeds for a task this driver still holds in memory.
func (d *Driver) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	if h == nil {
		return errors.New("recover task: nil handle")
	}
	var st driverState
	if err := json.Unmarshal(h.DriverState, &st); err != nil {
		return fmt.Errorf("recover task: decode driver state: %w", err)
	}
	t, err := d.task(st.TaskID)
	if err != nil {
		return fmt.Errorf("recover task: %w", err)
	}
	if !t.startedAt.Equal(st.StartedAt) {
		return fmt.Errorf("recover task %q: started at %s, handle says %s: %w",
			st.TaskID, t.startedAt, st.StartedAt, drivers.ErrTaskNotFound)
	}
	return nil
}

// WaitTask returns a channel that receives the task's ExitResult once and
// closes. If ctx is done first, it closes without a value. With
// wait_never_returns the channel never receives nor closes.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("wait task: %w", err)
	}
	ch := make(chan *drivers.ExitResult, 1)
	if t.conf.WaitNeverReturns {
		return ch, nil
	}
	go func() {
		defer close(ch)
		select {
		case <-t.done:
			ch <- t.exitResult()
		case <-ctx.Done():
		}
	}()
	return ch, nil
}

// StopTask sends signal (the task's kill_signal, then SIGINT, by default),
// waits up to timeout for the task to exit, then kills it with SIGKILL.
// It is a no-op for a task that already exited.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("stop task: %w", err)
	}
	if signal == "" {
		signal = t.cfg.KillSignal
	}
	sig := syscall.SIGINT
	if signal != "" {
		if sig, err = drivers.ParseSignal(signal); err != nil {
			return fmt.Errorf("stop task %q: %w", taskID, err)
		}
	}
	if t.exited() {
		return nil
	}
	t.requestStop(int(sig))

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-timer.C:
	case <-ctx.Done():
		return fmt.Errorf("stop task %q: %w", taskID, ctx.Err())
	}
	t.forceKill()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop task %q: %w", taskID, ctx.Err())
	}
}

// DestroyTask forgets the task; with force it kills a running task first,
// otherwise a running task is an error.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("destroy task: %w", err)
	}
	if !t.exited() {
		if !force {
			return fmt.Errorf("destroy task: %w", errTaskRunning(taskID))
		}
		t.forceKill()
		select {
		case <-t.done:
		case <-ctx.Done():
			return fmt.Errorf("destroy task %q: %w", taskID, ctx.Err())
		}
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
	return t.status(), nil
}

// SignalTask records the signal (see ReceivedSignals) or fails with the
// task's signal_error. Signals do not end a mock task; StopTask does.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	t, err := d.task(taskID)
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	if t.conf.SignalErr != "" {
		return errors.New(t.conf.SignalErr)
	}
	if _, err := drivers.ParseSignal(signal); err != nil {
		return fmt.Errorf("signal task %q: %w", taskID, err)
	}
	if t.exited() {
		return fmt.Errorf("signal task %q: task has exited", taskID)
	}
	t.recordSignal(signal)
	return nil
}

// ReceivedSignals returns the signals SignalTask delivered to the task, in
// order; nil for an unknown task. It is for tests.
func (d *Driver) ReceivedSignals(taskID string) []string {
	t, err := d.task(taskID)
	if err != nil {
		return nil
	}
	return t.receivedSignals()
}

// TaskStats sends a fixed sample every interval until ctx is done.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	if _, err := d.task(taskID); err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("task stats %q: interval must be positive", taskID)
	}
	ch := make(chan *drivers.TaskResourceUsage)
	go func() {
		defer close(ch)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-timer.C:
				sample := &drivers.TaskResourceUsage{
					Timestamp:     now.UnixNano(),
					CPUPercent:    1,
					CPUTotalTicks: 10,
					MemoryRSS:     1 << 20,
				}
				select {
				case ch <- sample:
				case <-ctx.Done():
					return
				}
				timer.Reset(interval)
			}
		}
	}()
	return ch, nil
}

// ExecTask does what the task's exec_command says; without one it returns
// an empty successful result.
func (d *Driver) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	ec := t.conf.ExecCommand
	if ec == nil {
		return &drivers.ExecTaskResult{ExitResult: &drivers.ExitResult{}}, nil
	}
	if ec.RunFor > 0 {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		timer := time.NewTimer(time.Duration(ec.RunFor))
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("exec task %q: %w", taskID, ctx.Err())
		}
	}
	res := &drivers.ExitResult{ExitCode: ec.ExitCode}
	if ec.ExitErrMsg != "" {
		res.Err = errors.New(ec.ExitErrMsg)
	}
	return &drivers.ExecTaskResult{Stdout: []byte(ec.StdoutString), ExitResult: res}, nil
}

// Shutdown kills every task and waits for their goroutines. It is for
// tests and agent shutdown; the killed tasks are forgotten.
func (d *Driver) Shutdown() {
	d.mu.Lock()
	tasks := make([]*task, 0, len(d.tasks))
	for _, t := range d.tasks {
		tasks = append(tasks, t)
	}
	d.tasks = make(map[string]*task)
	d.mu.Unlock()
	for _, t := range tasks {
		t.forceKill()
	}
	d.wg.Wait()
}

func (d *Driver) task(id string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tasks[id]
	if !ok {
		return nil, fmt.Errorf("task %q: %w", id, drivers.ErrTaskNotFound)
	}
	return t, nil
}
