package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// createV2 creates the cgroup in the unified hierarchy, enabling the
// controllers it needs in every ancestor below the root, and sets the
// limits.
func (c *Cgroup) createV2(root string, cfg CgroupConfig) error {
	fsys := c.filesystem()
	ctrls := v2Controllers
	if cfg.Cpuset != "" {
		ctrls = append(ctrls[:len(ctrls):len(ctrls)], "cpuset")
	}
	enable := func(dir string) error {
		var b strings.Builder
		for i, ctrl := range ctrls {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("+" + ctrl)
		}
		err := writeString(fsys, filepath.Join(dir, "cgroup.subtree_control"), b.String())
		if errors.Is(err, syscall.EBUSY) {
			// cgroup v2 has no controllers in a cgroup that holds
			// processes itself (typical inside a container whose
			// processes sit in its root cgroup).
			return fmt.Errorf("%w: %s holds processes, so it cannot hand controllers to child cgroups; run the agent in a child cgroup of it", err, dir)
		}
		return err
	}
	// The root and the parent hand the controllers down to their children.
	if err := enable(root); err != nil {
		return err
	}
	parent := filepath.Join(root, cfg.Parent)
	if err := mkdirAll(fsys, root, parent, enable); err != nil {
		return fmt.Errorf("create parent cgroup: %w", err)
	}
	if err := enable(parent); err != nil { // it may have existed without them
		return err
	}
	if err := fsys.Mkdir(c.Path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create cgroup: %w", err)
	}
	return c.setV2(cfg.Resources)
}

// setV2 writes the limits.
func (c *Cgroup) setV2(r Resources) error {
	fsys := c.filesystem()
	hard, soft := r.hardAndSoftMemory()
	if hard > 0 {
		if err := writeInt(fsys, filepath.Join(c.Path, "memory.max"), hard); err != nil {
			return err
		}
		if err := writeInt(fsys, filepath.Join(c.Path, "memory.swap.max"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if soft > 0 {
		if err := writeInt(fsys, filepath.Join(c.Path, "memory.low"), soft); err != nil {
			return err
		}
	}
	if w := SharesToWeight(r.CPUShares); w > 0 {
		if err := writeInt(fsys, filepath.Join(c.Path, "cpu.weight"), w); err != nil {
			return err
		}
	}
	if r.PidsMax > 0 {
		if err := writeInt(fsys, filepath.Join(c.Path, "pids.max"), r.PidsMax); err != nil {
			return err
		}
	}
	if r.Cpuset != "" {
		if r.Mems != "" {
			if err := writeString(fsys, filepath.Join(c.Path, "cpuset.mems"), r.Mems); err != nil {
				return err
			}
		}
		if err := writeString(fsys, filepath.Join(c.Path, "cpuset.cpus"), r.Cpuset); err != nil {
			return err
		}
	}
	return nil
}

// statsV2 reads memory.current, memory.peak, memory.stat, cpu.stat and
// pids.current.
func (c *Cgroup) statsV2() (*Stats, error) {
	fsys := c.filesystem()
	st := &Stats{}
	var err error
	if st.MemoryUsage, err = readUint(fsys, filepath.Join(c.Path, "memory.current")); err != nil {
		return nil, fmt.Errorf("cgroup stats: %w", err)
	}
	st.MemoryMaxUsage, _ = readUint(fsys, filepath.Join(c.Path, "memory.peak")) // Linux 5.19+
	st.MemorySwap, _ = readUint(fsys, filepath.Join(c.Path, "memory.swap.current"))
	if ms, err := readKeyed(fsys, filepath.Join(c.Path, "memory.stat")); err == nil {
		st.MemoryRSS = ms["anon"]
		st.MemoryCache = ms["file"]
	}
	cpu, err := readKeyed(fsys, filepath.Join(c.Path, "cpu.stat"))
	if err != nil {
		return nil, fmt.Errorf("cgroup stats: %w", err)
	}
	st.CPUUsageNanos = cpu["usage_usec"] * 1000
	st.CPUUserNanos = cpu["user_usec"] * 1000
	st.CPUSystemNanos = cpu["system_usec"] * 1000
	st.Pids, _ = readUint(fsys, filepath.Join(c.Path, "pids.current"))
	return st, nil
}

// oomKilledV2 reads memory.events' oom_kill counter.
func (c *Cgroup) oomKilledV2() (bool, error) {
	ev, err := readKeyed(c.filesystem(), filepath.Join(c.Path, "memory.events"))
	if err != nil {
		return false, fmt.Errorf("read OOM state: %w", err)
	}
	return ev["oom_kill"] > 0 || ev["oom_group_kill"] > 0, nil
}

// killV2 writes cgroup.kill (Linux 5.14+); without it, it freezes the
// cgroup, SIGKILLs every process and thaws it.
func (c *Cgroup) killV2(ctx context.Context) error {
	fsys := c.filesystem()
	err := writeString(fsys, filepath.Join(c.Path, "cgroup.kill"), "1")
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	freeze := filepath.Join(c.Path, "cgroup.freeze")
	if err := writeString(fsys, freeze, "1"); err == nil {
		defer func() { _ = writeString(fsys, freeze, "0") }() // best effort: killed processes die once thawed
		fctx, cancel := context.WithTimeout(ctx, freezeTimeout)
		_ = poll(fctx, func() (bool, error) { // frozen, or kill anyway
			ev, err := readKeyed(fsys, filepath.Join(c.Path, "cgroup.events"))
			return err != nil || ev["frozen"] == 1, nil
		})
		cancel()
	}
	pids, err := c.Pids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill process %d: %w", pid, err)
		}
	}
	return nil
}

// openDir opens the cgroup's directory for clone3(CLONE_INTO_CGROUP).
func (c *Cgroup) openDir() (*os.File, error) {
	if c.Version != CgroupV2 || c.fs != nil {
		return nil, errors.New("not a v2 cgroup on the host")
	}
	return os.Open(c.Path)
}
