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

// createV1 creates the cgroup under each v1 controller it uses and sets
// the limits.
func (c *Cgroup) createV1(layout *CgroupLayout, cfg CgroupConfig) error {
	fsys := c.filesystem()
	ctrls := v1Controllers
	if cfg.Cpuset != "" {
		if layout.Controllers["cpuset"] == "" {
			return errors.New("a cpuset was asked for but the cpuset controller is not mounted")
		}
		ctrls = append(ctrls[:len(ctrls):len(ctrls)], "cpuset")
	}
	for _, ctrl := range ctrls {
		root := layout.Controllers[ctrl]
		dir := filepath.Join(root, cfg.Parent, cfg.Name)
		c.Paths[ctrl] = dir
		var init func(string) error
		if ctrl == "cpuset" {
			// A new cpuset cgroup starts with no CPUs or memory nodes and
			// takes no process until it has some: copy the parent's.
			init = func(d string) error { return inheritCpuset(fsys, d) }
		}
		if err := mkdirAll(fsys, root, dir, init); err != nil {
			return fmt.Errorf("create %s cgroup: %w", ctrl, err)
		}
	}
	return c.setV1(cfg.Resources)
}

// inheritCpuset copies cpuset.cpus and cpuset.mems from dir's parent.
func inheritCpuset(fsys cgroupFS, dir string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		b, err := fsys.ReadFile(filepath.Join(filepath.Dir(dir), f))
		if err != nil {
			return err
		}
		if err := writeString(fsys, filepath.Join(dir, f), strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	return nil
}

// setV1 writes the limits.
func (c *Cgroup) setV1(r Resources) error {
	fsys := c.filesystem()
	hard, soft := r.hardAndSoftMemory()
	if mem := c.Paths["memory"]; mem != "" && hard > 0 {
		if err := writeInt(fsys, filepath.Join(mem, "memory.limit_in_bytes"), hard); err != nil {
			return err
		}
		// No swap beyond the limit, where the kernel accounts swap.
		if err := writeInt(fsys, filepath.Join(mem, "memory.memsw.limit_in_bytes"), hard); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if soft > 0 {
			if err := writeInt(fsys, filepath.Join(mem, "memory.soft_limit_in_bytes"), soft); err != nil {
				return err
			}
		}
	}
	if cpu := c.Paths["cpu"]; cpu != "" && r.CPUShares > 0 {
		if err := writeInt(fsys, filepath.Join(cpu, "cpu.shares"), max(r.CPUShares, 2)); err != nil {
			return err
		}
	}
	if pids := c.Paths["pids"]; pids != "" && r.PidsMax > 0 {
		if err := writeInt(fsys, filepath.Join(pids, "pids.max"), r.PidsMax); err != nil {
			return err
		}
	}
	if cs := c.Paths["cpuset"]; cs != "" && r.Cpuset != "" {
		if r.Mems != "" {
			if err := writeString(fsys, filepath.Join(cs, "cpuset.mems"), r.Mems); err != nil {
				return err
			}
		}
		if err := writeString(fsys, filepath.Join(cs, "cpuset.cpus"), r.Cpuset); err != nil {
			return err
		}
	}
	return nil
}

// statsV1 reads the memory, cpuacct and pids counters.
func (c *Cgroup) statsV1() (*Stats, error) {
	fsys := c.filesystem()
	st := &Stats{}
	var err error
	if mem := c.Paths["memory"]; mem != "" {
		if st.MemoryUsage, err = readUint(fsys, filepath.Join(mem, "memory.usage_in_bytes")); err != nil {
			return nil, fmt.Errorf("cgroup stats: %w", err)
		}
		st.MemoryMaxUsage, _ = readUint(fsys, filepath.Join(mem, "memory.max_usage_in_bytes"))
		if ms, err := readKeyed(fsys, filepath.Join(mem, "memory.stat")); err == nil {
			st.MemoryRSS = ms["total_rss"]
			st.MemoryCache = ms["total_cache"]
			st.MemorySwap = ms["total_swap"]
		}
	}
	if acct := c.Paths["cpuacct"]; acct != "" {
		if st.CPUUsageNanos, err = readUint(fsys, filepath.Join(acct, "cpuacct.usage")); err != nil {
			return nil, fmt.Errorf("cgroup stats: %w", err)
		}
		st.CPUUserNanos, _ = readUint(fsys, filepath.Join(acct, "cpuacct.usage_user"))
		st.CPUSystemNanos, _ = readUint(fsys, filepath.Join(acct, "cpuacct.usage_sys"))
	}
	if pids := c.Paths["pids"]; pids != "" {
		st.Pids, _ = readUint(fsys, filepath.Join(pids, "pids.current"))
	}
	return st, nil
}

// oomKilledV1 reads memory.oom_control's oom_kill counter (Linux 4.13+);
// older kernels lack it, and then a hit of the limit (memory.failcnt)
// while under_oom is taken as an OOM kill.
func (c *Cgroup) oomKilledV1() (bool, error) {
	mem := c.Paths["memory"]
	if mem == "" {
		return false, nil
	}
	ctl, err := readKeyed(c.filesystem(), filepath.Join(mem, "memory.oom_control"))
	if err != nil {
		return false, fmt.Errorf("read OOM state: %w", err)
	}
	if n, ok := ctl["oom_kill"]; ok {
		return n > 0, nil
	}
	failcnt, err := readUint(c.filesystem(), filepath.Join(mem, "memory.failcnt"))
	if err != nil {
		return false, fmt.Errorf("read OOM state: %w", err)
	}
	return failcnt > 0 && ctl["under_oom"] > 0, nil
}

// killV1 freezes the cgroup so nothing can fork, SIGKILLs every process,
// and thaws it so that the signals are delivered.
func (c *Cgroup) killV1(ctx context.Context) error {
	fsys := c.filesystem()
	frz := c.Paths["freezer"]
	if frz != "" {
		state := filepath.Join(frz, "freezer.state")
		if err := writeString(fsys, state, "FROZEN"); err != nil {
			return err
		}
		defer func() { _ = writeString(fsys, state, "THAWED") }() // best effort; a failure leaves the processes frozen but killed
		// A process in uninterruptible sleep can keep the cgroup FREEZING:
		// wait a while, then kill anyway.
		fctx, cancel := context.WithTimeout(ctx, freezeTimeout)
		_ = poll(fctx, func() (bool, error) {
			b, err := fsys.ReadFile(state)
			return err != nil || strings.TrimSpace(string(b)) == "FROZEN", nil
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
