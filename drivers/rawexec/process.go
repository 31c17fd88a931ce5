package rawexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/plugins/drivers"
)

// processSpec is what startProcess runs.
type processSpec struct {
	Path       string   // resolved executable
	Args       []string // arguments, without argv[0]
	Env        []string // KEY=value
	Dir        string
	StdoutPath string
	StderrPath string
	User       string // run as this user; needs root
}

// process supervises one task process and its process group: it signals
// the group, records the exit, and stops it with a timeout. It is either
// our child (started here) or re-attached by pid after an agent restart.
type process struct {
	pid       int
	startTime uint64 // /proc starttime, to tell a reused pid apart
	startedAt time.Time
	// attached: not our child, so it may be reaped (and its pid reused)
	// before poll notices; signal checks startTime first.
	attached bool
	// done is closed once the process has exited and result is set.
	done chan struct{}

	mu       sync.Mutex // guards the fields below
	exited   bool       // the leader has exited (it may not be reaped yet)
	sentKill bool       // we sent SIGKILL
	result   *drivers.ExitResult
	exitedAt time.Time
}

// errProcessExited is returned when signalling a process that has exited.
var errProcessExited = errors.New("process has exited")

// startProcess starts spec in a new process group and supervises it.
func startProcess(spec *processSpec) (*process, error) {
	cred, err := credential(spec.User)
	if err != nil {
		return nil, err
	}
	stdout, err := openLog(spec.StdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := openLog(spec.StderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	p := &process{
		pid:       cmd.Process.Pid,
		startedAt: time.Now(),
		done:      make(chan struct{}),
	}
	// The child cannot be reaped before waitChild runs, so its stat exists.
	if st, err := readProcStat(p.pid); err == nil {
		p.startTime = st.StartTime
	}
	go p.waitChild(cmd)
	return p, nil
}

// attachProcess supervises a process started by an earlier agent, if pid
// still runs and started at startTime. Not being its parent, it polls
// /proc every interval to see it exit, and cannot learn its exit code.
func attachProcess(pid int, startTime uint64, startedAt time.Time, interval time.Duration) (*process, error) {
	if pid <= 0 || !alive(pid, startTime) {
		return nil, fmt.Errorf("process %d: %w", pid, drivers.ErrTaskNotFound)
	}
	p := &process{pid: pid, startTime: startTime, startedAt: startedAt, attached: true, done: make(chan struct{})}
	go p.poll(interval)
	return p, nil
}

// waitChild waits for our child to exit. It first waits without reaping,
// marks the process exited, then reaps it: until then the pid cannot be
// reused, so signal never hits another process.
func (p *process) waitChild(cmd *exec.Cmd) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	p.mu.Lock()
	p.exited = true
	p.mu.Unlock()

	err := cmd.Wait()
	p.finish(exitResult(cmd.ProcessState, err))
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
		if alive(p.pid, p.startTime) {
			continue
		}
		p.mu.Lock()
		p.exited = true
		killed := p.sentKill
		p.mu.Unlock()
		res := &drivers.ExitResult{Err: errors.New("exit code unknown: the process was re-attached after an agent restart")}
		if killed {
			res = &drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
		}
		p.finish(res)
		return
	}
}

func (p *process) finish(res *drivers.ExitResult) {
	p.mu.Lock()
	p.exited = true
	p.result = res
	p.exitedAt = time.Now()
	p.mu.Unlock()
	close(p.done)
}

// signal sends sig to the process group.
func (p *process) signal(sig syscall.Signal) error {
	// The lock is held across kill(2) on purpose: it orders the signal
	// before waitChild's reaping, so our child's pid cannot have been
	// reused. (For an attached process a small window remains between the
	// /proc check and kill.)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited || (p.attached && !alive(p.pid, p.startTime)) {
		return errProcessExited
	}
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		// The leader left its group; signal it alone.
		err = syscall.Kill(p.pid, sig)
	}
	if errors.Is(err, syscall.ESRCH) {
		return errProcessExited
	}
	if err != nil {
		return fmt.Errorf("signal process %d with %s: %w", p.pid, sig, err)
	}
	if sig == syscall.SIGKILL {
		p.sentKill = true
	}
	return nil
}

// stop sends sig, waits up to timeout for the process to exit, then kills
// its group with SIGKILL. Whatever is left of the group afterwards is
// killed too. It returns when the process has exited or ctx is done.
func (p *process) stop(ctx context.Context, sig syscall.Signal, timeout time.Duration) error {
	if err := p.signal(sig); err != nil && !errors.Is(err, errProcessExited) {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		if err := p.signal(syscall.SIGKILL); err != nil && !errors.Is(err, errProcessExited) {
			return err
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.killGroup()
	return nil
}

// killGroup kills what is left of the process group once the leader has
// exited (children it left behind).
func (p *process) killGroup() {
	if len(groupMembers(p.pid)) > 0 {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // best effort: they may be gone already
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

// openLog opens path for appending, creating it and its directory.
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

// credential returns the credential to run as name; nil for "" (the
// agent's own user).
func credential(name string) (*syscall.Credential, error) {
	if name == "" {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("running the task as user %q needs the agent to run as root; remove \"user\" from the task or run the agent as root", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("look up task user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: invalid uid %q", name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: invalid gid %q", name, u.Gid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return cred, nil
}
