package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// ErrShimDied means the shim is gone and left no exit record: the task's
// exit is unknown. Its remaining processes have been killed.
var ErrShimDied = errors.New("shim exited without recording the task's exit")

// ErrTaskExited is returned by Signal and Stats once the task has exited.
var ErrTaskExited = errors.New("task has exited")

// DefaultStopSignal is the signal Stop sends when given none (Nomad's
// default kill_signal).
const DefaultStopSignal = "SIGINT"

// StopSignal picks a driver's StopTask signal: the given one, else the
// task's kill_signal, else DefaultStopSignal.
func StopSignal(signal, killSignal string) string {
	switch {
	case signal != "":
		return signal
	case killSignal != "":
		return killSignal
	}
	return DefaultStopSignal
}

// defaultStartTimeout bounds Start when its context has no deadline.
const defaultStartTimeout = 30 * time.Second

// retryInterval is how long Wait pauses when a live shim does not answer.
const retryInterval = 100 * time.Millisecond

// Handle talks to one shim. It holds no connection (every call dials the
// socket), so it needs no closing. It is safe for concurrent use.
type Handle struct {
	st State
	// reaper tells when the shim is gone: the shim this process started
	// (Start) and reaps, or one it attached to (Attach) and watches; nil
	// where it cannot watch one, whose exit Wait then learns from the
	// shim.
	reaper *reaper

	mu sync.Mutex // guards the fields below
	// exit is the task's exit once known.
	exit *ExitStatus
	// orphansKilled is true once the processes of a task whose shim died
	// were killed.
	orphansKilled bool
}

// Start runs `exe exeArgs... -state-dir <spec.StateDir>` (see Command) as
// the shim for spec, waits until the shim runs the task and serves its
// socket, and returns a handle. The shim is not a child of the caller: it
// runs in its own session and outlives the caller. A spec without
// SocketPath gets SocketPathFor(StateDir). If the task cannot be started
// (command not found, bad user, ...), Start returns the reason and no shim
// remains. ctx bounds the start (30s when it has no deadline).
func Start(ctx context.Context, exe string, exeArgs []string, spec *Spec) (*Handle, error) {
	spec, err := spec.validate()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	probe := net.Dialer{Timeout: time.Second}
	if c, err := probe.DialContext(ctx, "unix", spec.SocketPath); err == nil {
		c.Close()
		return nil, fmt.Errorf("start shim: a shim already serves %s: use a new state dir per task invocation", spec.SocketPath)
	}
	if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create shim state dir: %w", err)
	}
	if live, err := Live(spec.StateDir); err != nil || live {
		return nil, errors.Join(fmt.Errorf("start shim: a shim already runs in %s: use a new state dir per task invocation", spec.StateDir), err)
	}
	for _, stale := range []string{exitFile, stateFile} {
		if err := os.Remove(filepath.Join(spec.StateDir, stale)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove stale %s: %w", stale, err)
		}
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode shim spec: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(spec.StateDir, specFile), b, 0o600); err != nil {
		return nil, fmt.Errorf("write shim spec: %w", err)
	}

	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("shim ready pipe: %w", err)
	}
	defer readyR.Close()
	// The shim is started directly (no launcher process in between): in a
	// session of its own from the first instant, so that a kill of the
	// caller's process group does not reach it, and reaped by this process
	// when it exits (reap) unless this process is gone by then.
	cmd := exec.Command(exe, append(append([]string{}, exeArgs...), "-state-dir", spec.StateDir, "-detached")...)
	cmd.Dir = "/"
	cmd.Env = shimEnv(os.Environ())
	cmd.ExtraFiles = []*os.File{readyW} // readyFD in the shim
	pidfd := -1
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd}
	err = startIn(spec.NetNSPath, cmd) // netns_linux.go
	readyW.Close()
	if err != nil {
		return nil, fmt.Errorf("start shim %q: %w", exe, err)
	}
	shimPID := cmd.Process.Pid
	r := newReaper()
	killShim := reap(cmd.Process, pidfd, r)

	stop := context.AfterFunc(ctx, func() { _ = readyR.SetReadDeadline(time.Now()) })
	defer stop()
	dec := json.NewDecoder(io.LimitReader(readyR, 1<<16))
	for {
		var m readyMsg
		if err := dec.Decode(&m); err != nil {
			// The shim may be starting the task, or run it already: do
			// not leave it behind.
			killShim()
			abandonErr := abandonStart(ctx, spec.StateDir)
			if ctx.Err() != nil {
				return nil, errors.Join(fmt.Errorf("start shim: %w", ctx.Err()), abandonErr)
			}
			return nil, errors.Join(fmt.Errorf("shim pid %d exited before it was ready; see %s",
				shimPID, filepath.Join(spec.StateDir, logFile)), abandonErr)
		}
		switch {
		case m.Error != "":
			return nil, fmt.Errorf("shim: %s", m.Error)
		case m.State != nil:
			return &Handle{st: *m.State, reaper: r}, nil
		}
	}
}

// Attach returns a handle to the shim st describes, after an agent
// restart. If the shim is gone, the handle reports the exit it recorded;
// if it left none, Attach kills what remains of the task and returns an
// error wrapping ErrShimDied.
func Attach(ctx context.Context, st *State) (*Handle, error) {
	if st == nil {
		return nil, errors.New("attach to shim: no state")
	}
	if st.Version != StateVersion {
		return nil, fmt.Errorf("attach to shim: state version %d, this drover reads %d", st.Version, StateVersion)
	}
	h := &Handle{st: *st}
	if e, err := h.settle(); err != nil {
		return nil, fmt.Errorf("attach to shim of task pid %d: %w", st.TaskPID, err)
	} else if e != nil {
		return h, nil
	}
	// The shim lives: it must answer for the same task.
	s, err := h.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("attach to shim of task pid %d: %w", st.TaskPID, err)
	}
	if s.TaskPID != st.TaskPID {
		return nil, fmt.Errorf("attach to shim: it runs task pid %d, state says %d", s.TaskPID, st.TaskPID)
	}
	if r := newReaper(); watch(st, r) {
		h.reaper = r
	}
	return h, nil
}

// State returns what to persist to Attach to this shim later.
func (h *Handle) State() *State {
	st := h.st
	return &st
}

// Wait returns the task's exit once it is recorded. Cancelling ctx
// abandons the wait, not the task. It returns an error wrapping ErrShimDied
// when the shim died without recording the exit.
//
// Wait waits for the shim to exit (it exits right after recording the
// task's exit) and reads the record: no connection to the shim stays open
// while the task runs. Where the shim cannot be watched (an attached shim
// on a kernel without pidfd_open), it asks the shim.
func (h *Handle) Wait(ctx context.Context) (*ExitStatus, error) {
	if h.reaper != nil {
		if e := h.knownExit(); e != nil {
			return e, nil
		}
		select {
		case <-h.reaper.done:
			return h.settle()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for {
		if e := h.knownExit(); e != nil {
			return e, nil
		}
		resp, err := h.call(ctx, request{Op: opWait})
		if err == nil && resp.Exit == nil {
			return nil, errors.New("wait for task: shim sent no exit")
		}
		if err == nil {
			return h.setExit(resp.Exit), nil
		}
		if !isUnreachable(err) {
			return nil, fmt.Errorf("wait for task: %w", err)
		}
		e, err := h.settle()
		if err != nil || e != nil {
			return e, err
		}
		// The shim lives but does not answer (yet): try again.
		t := time.NewTimer(retryInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// Stop sends signal (DefaultStopSignal when empty) to the task's process
// group and has the shim SIGKILL the group if it has not exited after
// timeout. The shim carries the stop through even if the caller goes away.
// Stop returns once the task no longer runs, also when its shim died
// (Wait then reports ErrShimDied); ctx abandons the waiting only.
func (h *Handle) Stop(ctx context.Context, signal string, timeout time.Duration) error {
	if signal == "" {
		signal = DefaultStopSignal
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return fmt.Errorf("stop task: %w", err)
	}
	if h.knownExit() != nil {
		return nil
	}
	resp, err := h.call(ctx, request{Op: opStop, Signal: int(sig), Timeout: max(timeout, 0)})
	if err == nil {
		h.setExit(resp.Exit)
		return nil
	}
	if !isUnreachable(err) {
		return fmt.Errorf("stop task: %w", err)
	}
	e, serr := h.settle()
	if e != nil || errors.Is(serr, ErrShimDied) {
		return nil
	}
	if serr != nil {
		return fmt.Errorf("stop task: %w", serr)
	}
	return fmt.Errorf("stop task: %w", err)
}

// Signal sends signal ("SIGHUP", "HUP" or a number) to the task's main
// process. It returns ErrTaskExited once the task has exited.
func (h *Handle) Signal(ctx context.Context, signal string) error {
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	_, err = h.callOrSettle(ctx, request{Op: opSignal, Signal: int(sig)})
	if err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	return nil
}

// Stats samples the resource use of the task's process group. It returns
// ErrTaskExited once the task has exited.
func (h *Handle) Stats(ctx context.Context) (*Usage, error) {
	resp, err := h.callOrSettle(ctx, request{Op: opStats})
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	return resp.Usage, nil
}

// Status returns the task's state; once the shim has exited, it is built
// from the exit file.
func (h *Handle) Status(ctx context.Context) (*Status, error) {
	exited := func(e *ExitStatus) *Status {
		return &Status{TaskPID: h.st.TaskPID, StartedAt: h.st.StartedAt, Exit: e}
	}
	if e := h.knownExit(); e != nil {
		return exited(e), nil
	}
	resp, err := h.call(ctx, request{Op: opStatus})
	if err == nil {
		if resp.Status == nil {
			return nil, errors.New("task status: shim sent no status")
		}
		if resp.Status.Exit != nil {
			h.setExit(resp.Status.Exit)
		}
		return resp.Status, nil
	}
	if isUnreachable(err) {
		e, serr := h.settle()
		if e != nil {
			return exited(e), nil
		}
		if serr != nil {
			err = serr
		}
	}
	return nil, fmt.Errorf("task status: %w", err)
}

// callOrSettle calls the shim for a request that is meaningless after the
// exit: it fails with ErrTaskExited once the task has exited.
func (h *Handle) callOrSettle(ctx context.Context, req request) (*response, error) {
	if h.knownExit() != nil {
		return nil, ErrTaskExited
	}
	resp, err := h.call(ctx, req)
	if err == nil {
		return resp, nil
	}
	if isUnreachable(err) {
		e, serr := h.settle()
		if e != nil {
			return nil, ErrTaskExited
		}
		if serr != nil {
			return nil, serr
		}
	}
	return nil, err
}

func (h *Handle) call(ctx context.Context, req request) (*response, error) {
	resp, err := call(ctx, h.st.SocketPath, req)
	if err != nil && err.Error() == ErrTaskExited.Error() {
		return nil, ErrTaskExited
	}
	return resp, err
}

// settle decides what an unreachable shim means: the recorded exit; nil,
// nil when the shim still lives; or ErrShimDied when it is gone without a
// record, after killing what is left of the task.
func (h *Handle) settle() (*ExitStatus, error) {
	if e := h.knownExit(); e != nil {
		return e, nil
	}
	e, err := readExit(h.st.StateDir)
	if err != nil || e != nil {
		return h.setExit(e), err
	}
	if processAlive(h.st.ShimPID, h.st.ShimStartTicks, h.st.BootID) {
		return nil, nil
	}
	// The shim may have recorded the exit just before it exited.
	if e, err := readExit(h.st.StateDir); err != nil || e != nil {
		return h.setExit(e), err
	}
	h.mu.Lock()
	kill := !h.orphansKilled
	h.orphansKilled = true
	h.mu.Unlock()
	if kill && (h.st.BootID == "" || h.st.BootID == bootID()) {
		if h.st.Cgroup != nil {
			// An isolated task died with its shim (parent-death signal)
			// and its namespace with it; whatever else joined the
			// cgroup is killed and the cgroup removed.
			if err := destroyCgroup(h.st.Cgroup); err != nil {
				return nil, fmt.Errorf("shim pid %d, task pid %d: %w; and its cgroup: %w", h.st.ShimPID, h.st.TaskPID, ErrShimDied, err)
			}
		} else {
			// The task's main process got SIGKILL from the kernel when
			// the shim died (Pdeathsig); the rest of its group is ended
			// here. The shim led the session the group lives in.
			killOrphans(h.st.TaskPID, h.st.ShimPID)
		}
	}
	return nil, fmt.Errorf("shim pid %d, task pid %d: %w", h.st.ShimPID, h.st.TaskPID, ErrShimDied)
}

func (h *Handle) knownExit() *ExitStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit
}

// setExit records e (when not nil) and returns it.
func (h *Handle) setExit(e *ExitStatus) *ExitStatus {
	if e == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.exit == nil {
		h.exit = e
	}
	return h.exit
}

func isUnreachable(err error) bool {
	var u *unreachableError
	return errors.As(err, &u)
}
