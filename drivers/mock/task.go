package mock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// task is one mock task: a goroutine (run) that exits as its config says.
type task struct {
	id        string
	cfg       *drivers.TaskConfig
	conf      *TaskConfig
	startedAt time.Time

	// stop receives StopTask's signal number; kill is closed to force-kill.
	stop     chan int
	kill     chan struct{}
	killOnce sync.Once
	// done is closed when the task has exited and result is set.
	done chan struct{}

	mu          sync.Mutex // guards the fields below
	completedAt time.Time
	result      *drivers.ExitResult
	signals     []string
}

func newTask(cfg *drivers.TaskConfig, conf *TaskConfig, now time.Time) *task {
	return &task{
		id:        cfg.ID,
		cfg:       cfg,
		conf:      conf,
		startedAt: now,
		stop:      make(chan int, 1),
		kill:      make(chan struct{}),
		done:      make(chan struct{}),
	}
}

// run is the task's life; it returns when the task has exited.
func (t *task) run(logf func(msg string, args ...any)) {
	defer close(t.done)

	// As Nomad's mock: the task exits when run_for elapses, at once when
	// it is unset (after writing stdout_string).
	var killC, repeatC <-chan time.Time
	runTimer := time.NewTimer(time.Duration(max(t.conf.RunFor, 0)))
	defer runTimer.Stop()
	runC := runTimer.C

	out := t.openStdout(logf)
	if out != nil {
		defer out.Close()
	}
	repeatsLeft := 0
	var repeatTimer *time.Timer
	if out != nil && t.conf.StdoutString != "" {
		t.write(out, logf)
		repeatsLeft = t.conf.StdoutRepeat
		if repeatsLeft > 0 {
			repeatTimer = time.NewTimer(time.Duration(t.conf.StdoutRepeatDuration))
			defer repeatTimer.Stop()
			repeatC = repeatTimer.C
		}
	}

	stopSig := 0
	for {
		select {
		case <-runC:
			res := &drivers.ExitResult{ExitCode: t.conf.ExitCode, Signal: t.conf.ExitSignal}
			if t.conf.ExitErrMsg != "" {
				res.Err = errors.New(t.conf.ExitErrMsg)
			}
			t.exit(res)
			return
		case sig := <-t.stop:
			if stopSig != 0 {
				continue // already stopping
			}
			stopSig = sig
			if t.conf.KillAfter <= 0 {
				t.exit(signalled(sig))
				return
			}
			killTimer := time.NewTimer(time.Duration(t.conf.KillAfter))
			defer killTimer.Stop()
			killC = killTimer.C
		case <-killC:
			t.exit(signalled(stopSig))
			return
		case <-t.kill:
			t.exit(signalled(int(syscall.SIGKILL)))
			return
		case <-repeatC:
			t.write(out, logf)
			repeatsLeft--
			if repeatsLeft > 0 {
				repeatTimer.Reset(time.Duration(t.conf.StdoutRepeatDuration))
			} else {
				repeatC = nil
			}
		}
	}
}

// signalled is the ExitResult of a process killed by sig.
func signalled(sig int) *drivers.ExitResult {
	return &drivers.ExitResult{ExitCode: 128 + sig, Signal: sig}
}

func (t *task) openStdout(logf func(msg string, args ...any)) *os.File {
	if t.cfg.StdoutPath == "" || t.conf.StdoutString == "" {
		return nil
	}
	// Never through a link another task of the alloc planted.
	f, err := os.OpenFile(t.cfg.StdoutPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		logf("open stdout failed", "path", t.cfg.StdoutPath, "error", err)
		return nil
	}
	return f
}

func (t *task) write(w io.Writer, logf func(msg string, args ...any)) {
	if _, err := io.WriteString(w, t.conf.StdoutString); err != nil {
		logf("write stdout failed", "error", err)
	}
}

func (t *task) exit(res *drivers.ExitResult) {
	t.mu.Lock()
	t.result = res
	t.completedAt = time.Now()
	t.mu.Unlock()
}

// forceKill makes the task exit with SIGKILL unless it already exited.
func (t *task) forceKill() {
	t.killOnce.Do(func() { close(t.kill) })
}

// requestStop delivers a stop signal; a second request while stopping is
// ignored by run.
func (t *task) requestStop(sig int) {
	select {
	case t.stop <- sig:
	default: // a stop is already pending
	}
}

func (t *task) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

func (t *task) status() *drivers.TaskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &drivers.TaskStatus{
		ID:          t.id,
		Name:        t.cfg.Name,
		State:       drivers.TaskStateRunning,
		StartedAt:   t.startedAt,
		CompletedAt: t.completedAt,
	}
	if t.result != nil {
		st.State = drivers.TaskStateExited
		r := *t.result
		st.ExitResult = &r
	}
	return st
}

func (t *task) exitResult() *drivers.ExitResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.result == nil {
		return nil
	}
	r := *t.result
	return &r
}

func (t *task) recordSignal(sig string) {
	t.mu.Lock()
	t.signals = append(t.signals, sig)
	t.mu.Unlock()
}

func (t *task) receivedSignals() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.signals...)
}

// errTaskRunning is returned by DestroyTask without force for a running task.
func errTaskRunning(id string) error {
	return fmt.Errorf("task %q is still running; stop it first or destroy with force", id)
}
