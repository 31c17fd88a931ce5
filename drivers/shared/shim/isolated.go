package shim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
)

// cgroupKillTimeout bounds a SIGKILL of the task's cgroup and the wait for
// it to empty, and the removal of the cgroup.
const cgroupKillTimeout = 10 * time.Second

// Isolation is the optional part of a Spec that runs the task through
// drivers/shared/isolation (the exec driver): the shim creates the task's
// cgroup, starts the isolation init stage in new namespaces inside it, and
// the init stage execve's the task, which becomes PID 1 of its pid
// namespace and the shim's child. It is JSON-serialisable.
//
// With Isolation the shim
//   - signals and kills the whole cgroup (not a process group) on stop;
//   - samples stats from the cgroup (memory as the kernel charges it);
//   - records OOMKilled in the exit when the cgroup saw an OOM kill;
//   - removes the cgroup once the task's exit is known, before it records
//     the exit (State.Cgroup names it, so a driver can still destroy it
//     when the shim died: Attach and Wait do so);
//   - arms the task's parent-death signal, so that the task and its whole
//     pid namespace die with the shim.
type Isolation struct {
	// Spec is what the init stage sets up and runs. DieWithParent is
	// forced on.
	Spec isolation.Spec `json:"spec"`
	// Cgroup names the task's cgroup and its limits. A cgroup of the same
	// name left by an earlier run is removed first.
	Cgroup isolation.CgroupConfig `json:"cgroup"`
	// Init runs the init stage; nil is isolation.DefaultInitCommand(),
	// the shim's own binary (drover-shim, or drover). Tests name the test
	// binary, whose TestMain must call isolation.RunIfInit.
	Init *isolation.InitCommand `json:"init,omitempty"`
}

// validate checks an isolated spec; s is the whole Spec.
func (iso *Isolation) validate(s *Spec) []error {
	var errs []error
	if iso.Spec.Path == "" {
		errs = append(errs, errors.New("isolation: command is empty"))
	}
	if iso.Cgroup.Name == "" || iso.Cgroup.Parent == "" {
		errs = append(errs, errors.New("isolation: cgroup parent and name are required"))
	}
	if s.User != "" {
		errs = append(errs, errors.New("isolation: set the task's user in the isolation spec (uid, gid), not in User"))
	}
	return errs
}

// startIsolated creates the task's cgroup and starts the task isolated in
// it, its output going to pipes the supervisor reads. Like startTask, it
// must run on a thread that lives as long as the shim.
func startIsolated(spec *Spec, log *slog.Logger, now func() time.Time) (*supervisor, error) {
	iso := spec.Isolation
	init := iso.Init
	if init == nil {
		def, err := isolation.DefaultInitCommand()
		if err != nil {
			return nil, err
		}
		init = &def
	}
	layout, err := isolation.DetectCgroups()
	if err != nil {
		return nil, err
	}
	cg, err := isolation.NewCgroup(layout, iso.Cgroup)
	if err != nil {
		return nil, err
	}
	removeCgroup := func() {
		ctx, cancel := context.WithTimeout(context.Background(), cgroupKillTimeout)
		defer cancel()
		if err := cg.Destroy(ctx); err != nil {
			log.Warn("remove the cgroup of a task that did not start", "error", err)
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		removeCgroup()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		removeCgroup()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	ispec := iso.Spec
	ispec.DieWithParent = true
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	p, err := isolation.Start(ctx, *init, &ispec, cg, outW, errW)
	cancel()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		removeCgroup()
		return nil, fmt.Errorf("start task command %q: %w", ispec.Path, err)
	}
	started := now()
	return &supervisor{
		spec: spec,
		log:  log,
		wait: func() (syscall.WaitStatus, error) {
			ps, err := p.Wait()
			if ps == nil {
				return 0, err
			}
			return ps.Sys().(syscall.WaitStatus), nil
		},
		pid:       p.Pid,
		cg:        cg,
		startedAt: started,
		// The first sample's CPUPercent is the average since the start.
		stats:  &cgroupSampler{cg: cg, now: now, prev: &isolation.Stats{}, prevAt: started},
		outR:   outR,
		errR:   errR,
		reaped: make(chan struct{}),
		exited: make(chan struct{}),
	}, nil
}

// signalCgroup sends sig to every process of the task's cgroup. The task's
// main process, PID 1 of its namespace, gets it only if it handles it.
func signalCgroup(cg *isolation.Cgroup, sig syscall.Signal) error {
	pids, err := cg.Pids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		// A process leaves the cgroup only by exiting: each pid is the
		// task's, or gone (ESRCH).
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal process %d: %w", pid, err)
		}
	}
	return nil
}

// killCgroup SIGKILLs every process of cg and waits until it is empty.
func killCgroup(cg *isolation.Cgroup) error {
	ctx, cancel := context.WithTimeout(context.Background(), cgroupKillTimeout)
	defer cancel()
	if err := cg.Kill(ctx); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// destroyCgroup kills what is left in cg and removes it.
func destroyCgroup(cg *isolation.Cgroup) error {
	ctx, cancel := context.WithTimeout(context.Background(), cgroupKillTimeout)
	defer cancel()
	return cg.Destroy(ctx)
}

// cgroupSampler measures an isolated task's cgroup and remembers the
// previous reading to compute CPUPercent.
type cgroupSampler struct {
	cg  *isolation.Cgroup
	now func() time.Time

	mu     sync.Mutex // guards the fields below
	prev   *isolation.Stats
	prevAt time.Time
}

// nanosPerTick converts cgroup CPU nanoseconds to USER_HZ ticks.
const nanosPerTick = 1e9 / userHZ

func (s *cgroupSampler) sample() (*Usage, error) {
	at := s.now()
	st, err := s.cg.Stats()
	if err != nil {
		return nil, fmt.Errorf("read task cgroup: %w", err)
	}
	u := &Usage{
		Timestamp:           at,
		CPUUserTicks:        st.CPUUserNanos / nanosPerTick,
		CPUSystemTicks:      st.CPUSystemNanos / nanosPerTick,
		CPUTotalTicks:       st.CPUUsageNanos / nanosPerTick,
		RSSBytes:            st.MemoryRSS,
		MemoryCacheBytes:    st.MemoryCache,
		MemorySwapBytes:     st.MemorySwap,
		MemoryMaxUsageBytes: st.MemoryMaxUsage,
		Pids:                int(st.Pids),
	}
	if u.RSSBytes == 0 {
		// Kernels that do not split anonymous memory out: report usage.
		u.RSSBytes = st.MemoryUsage
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u.CPUPercent = isolation.CPUPercent(s.prev, st, at.Sub(s.prevAt))
	s.prev, s.prevAt = st, at
	return u, nil
}
