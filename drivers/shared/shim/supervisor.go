package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
)

// drainTimeout bounds how long the shim reads the task's output pipes after
// the task exited: a process that left the task's group may still hold
// them open.
const drainTimeout = 5 * time.Second

// supervisor runs one task process inside the shim: it owns the process,
// its output pipes and the exit record.
type supervisor struct {
	spec *Spec
	log  *slog.Logger
	// wait waits for the task's main process and reaps it.
	wait      func() (syscall.WaitStatus, error)
	pid       int
	startedAt time.Time
	stats     usageSampler
	// cg is the task's cgroup when it runs isolated (Spec.Isolation); nil
	// for a plain process group.
	cg *isolation.Cgroup

	outR, errR *os.File

	reaped chan struct{} // closed when the task's process has been reaped
	exited chan struct{} // closed when the exit is on disk and in exit

	wg sync.WaitGroup // stop timers

	mu sync.Mutex // guards the fields below
	// gone is true once the task was reaped; its pid may then be reused,
	// so nothing is signalled any more.
	gone     bool
	stopping bool
	exit     *ExitStatus
}

// startTask starts the task process of spec (isolated when spec.Isolation
// is set) with its output going to pipes the supervisor reads. It must be
// called on a thread that lives as long as the shim (Pdeathsig is tied to
// the thread that forked, not the process).
func startTask(spec *Spec, log *slog.Logger, now func() time.Time) (*supervisor, error) {
	if spec.Isolation != nil {
		return startIsolated(spec, log, now)
	}
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	path, err := resolveCommand(spec.Command, env, spec.Dir)
	if err != nil {
		return nil, err
	}
	attr := &syscall.SysProcAttr{
		// Its own process group, so stop can signal everything it started.
		Setpgid: true,
		// If the shim dies, the task must not run unsupervised.
		Pdeathsig: syscall.SIGKILL,
	}
	if spec.User != "" {
		cred, err := credential(spec.User)
		if err != nil {
			return nil, err
		}
		attr.Credential = cred
	}
	// Orphans of the task's processes become the shim's: it finds them for
	// stats and kills them when the task ends.
	if err := becomeSubreaper(); err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{spec.Command}, spec.Args...),
		Env:         env,
		Dir:         spec.Dir,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: attr,
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start task command %q: %w", spec.Command, err)
	}
	pid, started := cmd.Process.Pid, now()
	return &supervisor{
		spec: spec,
		log:  log,
		// Not cmd.Wait: the shim reaps every child, the task's orphans
		// too, in one blocking wait4 loop on this thread.
		wait: func() (syscall.WaitStatus, error) {
			ws, err := reapUntil(pid)
			_ = cmd.Process.Release()
			return ws, err
		},
		pid:       pid,
		startedAt: started,
		stats:     &treeSampler{root: os.Getpid(), started: started, now: now},
		outR:      outR,
		errR:      errR,
		reaped:    make(chan struct{}),
		exited:    make(chan struct{}),
	}, nil
}

// run copies the task's output to stdout and stderr, waits for the task,
// kills what is left of its group, drains the output, closes the writers,
// records the exit on disk and then publishes it to waiters (also when
// recording failed). It returns the exit and what went wrong on the way.
func (s *supervisor) run(stdout, stderr io.WriteCloser) (*ExitStatus, error) {
	var copiers sync.WaitGroup
	copyOut := func(dst io.Writer, src *os.File, name string) {
		buf := make([]byte, 32<<10)
		if _, err := io.CopyBuffer(dst, src, buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			s.log.Warn("copy task output", "stream", name, "error", err)
		}
	}
	copiers.Go(func() { copyOut(stdout, s.outR, "stdout") })
	copiers.Go(func() { copyOut(stderr, s.errR, "stderr") })

	ws, waitErr := s.wait()
	var exit *ExitStatus
	if waitErr != nil {
		s.log.Error("wait for task", "error", waitErr)
		exit = &ExitStatus{ExitCode: -1, ExitedAt: time.Now()}
	} else {
		exit = exitFromStatus(ws, time.Now())
	}
	s.mu.Lock()
	s.gone = true
	if s.cg == nil {
		// Whatever the task left in its group would run unsupervised and
		// keep the output pipes open: end it while the group id cannot be
		// reused.
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	if s.cg == nil {
		// And what left the group: every process descended from the shim
		// is the task's.
		killDescendants(true)
	}
	if s.cg != nil {
		// PID 1's exit ended its namespace; processes that joined the
		// cgroup otherwise are ended here.
		if err := killCgroup(s.cg); err != nil {
			s.log.Warn("kill what is left of the task's cgroup", "error", err)
		}
		if oom, err := s.cg.OOMKilled(); err != nil {
			s.log.Warn("read the task's OOM kills", "error", err)
		} else {
			exit.OOMKilled = oom
		}
	}
	close(s.reaped)

	drained := make(chan struct{})
	go func() { copiers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		s.log.Warn("task output still open after exit; closing it", "timeout", drainTimeout)
		_ = s.outR.SetReadDeadline(time.Now())
		_ = s.errR.SetReadDeadline(time.Now())
		<-drained
	}
	s.outR.Close()
	s.errR.Close()
	errs := []error{stdout.Close(), stderr.Close()}
	s.wg.Wait()
	if s.cg != nil {
		// Nothing runs in it any more and no stop timer is left.
		if err := destroyCgroup(s.cg); err != nil {
			errs = append(errs, err)
			s.log.Error("remove the task's cgroup", "error", err)
		}
	} else {
		// What was forked while the first pass killed its parent.
		killDescendants(true)
	}

	exit.Version = exitFileVersion
	if err := writeExit(s.spec.StateDir, exit); err != nil {
		// Clients still get the exit from the socket; a restarted agent
		// will see ErrShimDied.
		errs = append(errs, err)
		s.log.Error("record exit", "error", err)
	}
	s.mu.Lock()
	s.exit = exit
	s.mu.Unlock()
	close(s.exited)
	s.log.Info("task exited", "exit_code", exit.ExitCode, "signal", exit.Signal, "oom_killed", exit.OOMKilled)
	return exit, errors.Join(errs...)
}

// exitFromStatus converts a reaped process's wait status.
func exitFromStatus(ws syscall.WaitStatus, at time.Time) *ExitStatus {
	if ws.Signaled() {
		sig := int(ws.Signal())
		return &ExitStatus{ExitCode: 128 + sig, Signal: sig, ExitedAt: at}
	}
	return &ExitStatus{ExitCode: ws.ExitStatus(), ExitedAt: at}
}

// signal sends sig to the task's main process only, as a user's
// "alloc signal" expects.
func (s *supervisor) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return ErrTaskExited
	}
	if err := syscall.Kill(s.pid, sig); err != nil {
		return fmt.Errorf("signal task: %w", err)
	}
	return nil
}

// signalGroupLocked sends sig to the task's whole process group, or every
// process of its cgroup. s.mu must be held and the task not gone.
func (s *supervisor) signalGroupLocked(sig syscall.Signal) {
	if s.cg == nil {
		_ = syscall.Kill(-s.pid, sig)
		return
	}
	if err := signalCgroup(s.cg, sig); err != nil {
		s.log.Warn("signal the task's cgroup", "signal", sig.String(), "error", err)
	}
}

// killGroup SIGKILLs the task's process group, or its whole cgroup.
func (s *supervisor) killGroup() {
	if s.cg != nil {
		// Also after the main process was reaped: the cgroup lives until
		// run removes it, after the stop timers are done.
		if err := killCgroup(s.cg); err != nil {
			s.log.Warn("kill the task's cgroup", "error", err)
		}
		return
	}
	s.mu.Lock()
	gone := s.gone
	if !gone {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	if !gone {
		// Not reaping: the shim's wait loop must see the task's exit.
		killDescendants(false)
	}
}

// stop sends sig to the task's process group (every process of its
// cgroup) and SIGKILLs the group (cgroup) if it has not exited after
// timeout. Every stop arms its own timer, so a later
// stop with a shorter timeout escalates sooner. It does not wait.
func (s *supervisor) stop(sig syscall.Signal, timeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Checked under mu, with the timer added under it too: run sets gone
	// before it waits for the timers, so none is added after that.
	if s.gone {
		return
	}
	s.stopping = true
	s.log.Info("stopping task", "signal", sig.String(), "timeout", timeout)
	s.signalGroupLocked(sig)
	s.wg.Go(func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-s.reaped:
		case <-t.C:
			s.log.Info("task did not stop in time; killing it", "timeout", timeout)
			s.killGroup()
		}
	})
}

// waitExit returns the recorded exit once there is one, or ctx's error.
func (s *supervisor) waitExit(ctx context.Context) (*ExitStatus, error) {
	select {
	case <-s.exited:
	case <-ctx.Done():
		// Prefer an exit that is there already.
		if e := s.exitStatus(); e != nil {
			return e, nil
		}
		return nil, ctx.Err()
	}
	return s.exitStatus(), nil
}

func (s *supervisor) exitStatus() *ExitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

func (s *supervisor) status() *Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Status{
		Running:   s.exit == nil,
		TaskPID:   s.pid,
		StartedAt: s.startedAt,
		Exit:      s.exit,
		Stopping:  s.stopping,
	}
}

// resolveCommand finds the program to run: a path with a slash is taken
// relative to dir; a bare name is looked up in env's PATH (else the
// shim's).
func resolveCommand(command string, env []string, dir string) (string, error) {
	if strings.Contains(command, "/") {
		if !filepath.IsAbs(command) && dir != "" {
			return filepath.Join(dir, command), nil
		}
		return command, nil
	}
	pathVar, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar, found = v, true
		}
	}
	if !found {
		pathVar = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, command)
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH %q", command, pathVar)
}

// credential returns the uid, gid and groups of name (a user name or a
// numeric uid) for the task, or nil when that is the shim's own user.
func credential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.Atoi(name); numErr != nil {
			return nil, fmt.Errorf("look up task user %q: %w", name, err)
		}
		if u, err = user.LookupId(name); err != nil {
			return nil, fmt.Errorf("look up task user %q: %w", name, err)
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("task user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("task user %q: gid %q: %w", name, u.Gid, err)
	}
	if int(uid) == os.Getuid() {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("task user %q: running as another user needs root", name)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	return cred, nil
}
