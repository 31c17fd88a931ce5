package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// errProcessExited is returned when signalling a task that has exited.
var errProcessExited = errors.New("task has exited")

// killTimeout bounds the SIGKILL of a task's cgroup and the wait for it to
// empty.
const killTimeout = 10 * time.Second

// process supervises one isolated task: its main process (PID 1 of the
// task's pid namespace) and its cgroup. It is either our child (started
// here) or re-attached by pid after an agent restart.
type process struct {
	st        isolation.State
	startedAt time.Time
	// attached: not our child, so it may be reaped (and its pid reused)
	// before poll notices; signal checks the start time first.
	attached bool
	// done is closed once the process has exited and result is set.
	done chan struct{}

	mu       sync.Mutex // guards the fields below
	exited   bool       // the main process has exited (it may not be reaped yet)
	sentKill bool       // we SIGKILLed the cgroup
	result   *drivers.ExitResult
	exitedAt time.Time
}

// superviseChild supervises p, which Start returned.
func superviseChild(p *isolation.Process, startedAt time.Time) *process {
	proc := &process{st: p.State, startedAt: startedAt, done: make(chan struct{})}
	go proc.waitChild(p)
	return proc
}

// attach supervises a task started by an earlier agent, if its main
// process still runs. Not being its parent, it polls /proc every interval
// and cannot learn the exit code.
func attach(st isolation.State, startedAt time.Time, interval time.Duration) (*process, error) {
	if st.Pid <= 0 || st.Cgroup == nil || !isolation.Alive(st.Pid, st.StartTime) {
		return nil, fmt.Errorf("process %d: %w", st.Pid, drivers.ErrTaskNotFound)
	}
	p := &process{st: st, startedAt: startedAt, attached: true, done: make(chan struct{})}
	go p.poll(interval)
	return p, nil
}

// waitChild waits for our child to exit. It first waits without reaping,
// marks the process exited, then reaps it: until then its pid cannot be
// reused, so signal never hits another process.
func (p *process) waitChild(child *isolation.Process) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.st.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	p.exited = true
	p.mu.Unlock()
	state, err := child.Wait()
	p.finish(exitResult(state, err))
}

// exitResult turns a wait status into an ExitResult; a process killed by a
// signal reports ExitCode 128+signal as a shell would.
func exitResult(state *os.ProcessState, waitErr error) *drivers.ExitResult {
	if state == nil {
		return &drivers.ExitResult{Err: fmt.Errorf("wait: %w", waitErr)}
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return &drivers.ExitResult{ExitCode: state.ExitCode()}
	}
	if ws.Signaled() {
		sig := int(ws.Signal())
		return &drivers.ExitResult{ExitCode: 128 + sig, Signal: sig}
	}
	return &drivers.ExitResult{ExitCode: ws.ExitStatus()}
}

// poll watches a re-attached process until it is gone.
func (p *process) poll(interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for range ticker.C {
		if isolation.Alive(p.st.Pid, p.st.StartTime) {
			continue
		}
		p.mu.Lock()
		p.exited = true
		killed := p.sentKill
		p.mu.Unlock()
		res := &drivers.ExitResult{Err: errors.New("exit code unknown: the task was re-attached after an agent restart")}
		if killed {
			res = &drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
		}
		p.finish(res)
		return
	}
}

// finish records the exit, with whether the cgroup saw an OOM kill, and
// releases waiters.
func (p *process) finish(res *drivers.ExitResult) {
	if oom, err := p.st.Cgroup.OOMKilled(); err == nil && oom {
		res.OOMKilled = true
	}
	p.mu.Lock()
	p.exited = true
	p.result = res
	p.exitedAt = time.Now()
	p.mu.Unlock()
	close(p.done)
}

// signal sends sig to the task's main process.
func (p *process) signal(sig syscall.Signal) error {
	// The lock is held across kill(2) on purpose: it orders the signal
	// before waitChild's reaping, so our child's pid cannot have been
	// reused. (For an attached process a small window remains between the
	// /proc check and kill.)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited || (p.attached && !isolation.Alive(p.st.Pid, p.st.StartTime)) {
		return errProcessExited
	}
	if err := syscall.Kill(p.st.Pid, sig); errors.Is(err, syscall.ESRCH) {
		return errProcessExited
	} else if err != nil {
		return fmt.Errorf("signal process %d with %s: %w", p.st.Pid, sig, err)
	}
	return nil
}

// signalAll sends sig to every process of the task's cgroup. The main
// process, being PID 1 of its namespace, gets it only if it handles it.
func (p *process) signalAll(sig syscall.Signal) error {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited {
		return errProcessExited
	}
	pids, err := p.st.Cgroup.Pids()
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	for _, pid := range pids {
		// Processes leave the cgroup only by exiting, so each pid is one
		// of the task's (or already gone: ESRCH).
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal process %d with %s: %w", pid, sig, err)
		}
	}
	return nil
}

// kill SIGKILLs every process of the cgroup.
func (p *process) kill(ctx context.Context) error {
	p.mu.Lock()
	p.sentKill = true
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	if err := p.st.Cgroup.Kill(ctx); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// stop sends sig to the task's processes, waits up to timeout for the main
// process to exit, then kills the cgroup. It returns when the task has
// exited or ctx is done.
func (p *process) stop(ctx context.Context, sig syscall.Signal, timeout time.Duration) error {
	if sig != syscall.SIGKILL {
		if err := p.signalAll(sig); err != nil && !errors.Is(err, errProcessExited) {
			return err
		}
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
	if err := p.kill(ctx); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *process) exitedYet() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitResult returns a copy of the result, nil while running.
func (p *process) exitResult() *drivers.ExitResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.result == nil {
		return nil
	}
	r := *p.result
	return &r
}

func (p *process) exitTime() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitedAt
}
