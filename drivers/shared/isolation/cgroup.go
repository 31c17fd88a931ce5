package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CgroupConfig names a task's cgroup and its limits.
type CgroupConfig struct {
	// Parent is the cgroup under which task cgroups are created ("drover").
	Parent string
	// Name is the task's cgroup, unique per task ("<alloc id>.<task>").
	Name string
	Resources
}

// Resources are the limits of a task's cgroup; zero means unset.
type Resources struct {
	// MemoryBytes is the memory the task reserved. It is the hard limit
	// unless MemoryMaxBytes is larger, in which case it becomes the soft
	// limit (v1 memory.soft_limit_in_bytes, v2 memory.low).
	MemoryBytes int64
	// MemoryMaxBytes is the hard memory limit when oversubscribing.
	MemoryMaxBytes int64
	// CPUShares is the relative CPU weight (v1 cpu.shares; v2 cpu.weight
	// is derived from it). Drivers pass the task's MHz.
	CPUShares int64
	// PidsMax bounds the number of processes and threads.
	PidsMax int64
	// Cpuset and Mems pin the task to CPUs and memory nodes ("0-1", "0");
	// Mems defaults to the parent's.
	Cpuset string
	Mems   string
}

// Cgroup is a task's cgroup. It is a plain value that can be serialised
// (JSON) and used again after a restart of the agent.
type Cgroup struct {
	// Version is CgroupV1 or CgroupV2.
	Version int `json:"version"`
	// Path is the cgroup's directory (v2).
	Path string `json:"path,omitempty"`
	// Paths maps each v1 controller to the cgroup's directory in it.
	Paths map[string]string `json:"paths,omitempty"`

	// fs is the filesystem the cgroup lives on; nil is the real one.
	fs cgroupFS
}

// Stats is one reading of a cgroup's counters.
type Stats struct {
	// MemoryUsage is all memory charged to the cgroup (page cache too).
	MemoryUsage uint64
	// MemoryRSS is anonymous memory; MemoryCache is page cache.
	MemoryRSS   uint64
	MemoryCache uint64
	MemorySwap  uint64
	// MemoryMaxUsage is the peak of MemoryUsage, where the kernel keeps it.
	MemoryMaxUsage uint64
	// CPUUsageNanos is the CPU time used by all processes, ever.
	CPUUsageNanos  uint64
	CPUUserNanos   uint64
	CPUSystemNanos uint64
	// Pids is the number of tasks (processes and threads).
	Pids uint64
}

func (c *Cgroup) filesystem() cgroupFS {
	if c.fs == nil {
		return realFS{}
	}
	return c.fs
}

// NewCgroup creates the task's cgroup described by cfg in layout and sets
// its limits. A cgroup of the same name left by an earlier run is killed
// and removed first, so that the new one starts with fresh counters (an
// old OOM kill must not be blamed on the new process).
func NewCgroup(layout *CgroupLayout, cfg CgroupConfig) (*Cgroup, error) {
	return newCgroup(layout, cfg, realFS{})
}

func newCgroup(layout *CgroupLayout, cfg CgroupConfig, fsys cgroupFS) (*Cgroup, error) {
	if layout == nil {
		return nil, errors.New("create cgroup: no cgroup layout")
	}
	if err := validName(cfg.Parent, true); err != nil {
		return nil, fmt.Errorf("create cgroup: parent: %w", err)
	}
	if err := validName(cfg.Name, false); err != nil {
		return nil, fmt.Errorf("create cgroup: name: %w", err)
	}
	cg := &Cgroup{Version: layout.Version, fs: fsys}
	switch layout.Version {
	case CgroupV2:
		cg.Path = filepath.Join(layout.Root, cfg.Parent, cfg.Name)
	case CgroupV1:
		cg.Paths = make(map[string]string)
		for ctrl, root := range layout.Controllers {
			cg.Paths[ctrl] = filepath.Join(root, cfg.Parent, cfg.Name)
		}
	default:
		return nil, fmt.Errorf("create cgroup: unknown cgroup version %d", layout.Version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), staleRemoveTimeout)
	err := cg.Destroy(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("create cgroup %s/%s: remove the one left by an earlier run: %w", cfg.Parent, cfg.Name, err)
	}
	if cg.Version == CgroupV2 {
		err = cg.createV2(layout.Root, cfg)
	} else {
		cg.Paths = make(map[string]string)
		err = cg.createV1(layout, cfg)
	}
	if err != nil {
		_ = cg.remove(context.Background()) // best effort: the error says what failed
		return nil, fmt.Errorf("create cgroup %s/%s: %w", cfg.Parent, cfg.Name, err)
	}
	return cg, nil
}

// validName rejects cgroup names that would escape their parent.
func validName(name string, nested bool) error {
	if name == "" {
		return errors.New("empty")
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." || (!nested && part != name) {
			return fmt.Errorf("invalid cgroup name %q", name)
		}
	}
	return nil
}

// mkdirAll creates dir and its missing parents below root, calling init
// for each directory it created (parents first).
func mkdirAll(fsys cgroupFS, root, dir string, init func(string) error) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("cgroup %s is not under %s", dir, root)
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		err := fsys.Mkdir(cur)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if init != nil {
			if err := init(cur); err != nil {
				return err
			}
		}
	}
	return nil
}

// Pids returns the processes in the cgroup (pids of the host's namespace).
func (c *Cgroup) Pids() ([]int, error) {
	b, err := c.filesystem().ReadFile(filepath.Join(c.procsDir(), "cgroup.procs"))
	if err != nil {
		return nil, fmt.Errorf("list cgroup processes: %w", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// procsDir is a directory whose cgroup.procs lists the cgroup's processes.
func (c *Cgroup) procsDir() string {
	if c.Version == CgroupV2 {
		return c.Path
	}
	for _, ctrl := range []string{"freezer", "memory", "pids"} {
		if p := c.Paths[ctrl]; p != "" {
			return p
		}
	}
	return ""
}

// Apply moves pid into the cgroup (every v1 hierarchy).
func (c *Cgroup) Apply(pid int) error {
	data := []byte(strconv.Itoa(pid))
	for _, dir := range c.dirs() {
		if err := c.filesystem().WriteFile(filepath.Join(dir, "cgroup.procs"), data); err != nil {
			return fmt.Errorf("move process %d into cgroup %s: %w", pid, dir, err)
		}
	}
	return nil
}

// dirs returns the cgroup's directories, without duplicates, sorted.
func (c *Cgroup) dirs() []string {
	if c.Version == CgroupV2 {
		return []string{c.Path}
	}
	var out []string
	for _, p := range c.Paths {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Stats reads the cgroup's counters.
func (c *Cgroup) Stats() (*Stats, error) {
	if c.Version == CgroupV2 {
		return c.statsV2()
	}
	return c.statsV1()
}

// OOMKilled reports whether the kernel's OOM killer killed a process of the
// cgroup.
func (c *Cgroup) OOMKilled() (bool, error) {
	if c.Version == CgroupV2 {
		return c.oomKilledV2()
	}
	return c.oomKilledV1()
}

// Kill SIGKILLs every process in the cgroup and waits until it is empty or
// ctx is done.
func (c *Cgroup) Kill(ctx context.Context) error {
	var err error
	if c.Version == CgroupV2 {
		err = c.killV2(ctx)
	} else {
		err = c.killV1(ctx)
	}
	if err != nil {
		return fmt.Errorf("kill cgroup: %w", err)
	}
	return c.waitEmpty(ctx)
}

// waitEmpty polls until the cgroup has no processes.
func (c *Cgroup) waitEmpty(ctx context.Context) error {
	return poll(ctx, func() (bool, error) {
		pids, err := c.Pids()
		if errors.Is(err, os.ErrNotExist) {
			return true, nil
		}
		return err == nil && len(pids) == 0, err
	})
}

// Destroy kills what is left in the cgroup and removes it. Removing a
// cgroup that is gone is not an error.
func (c *Cgroup) Destroy(ctx context.Context) error {
	if err := c.Kill(ctx); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("destroy cgroup: %w", err)
	}
	if err := c.remove(ctx); err != nil {
		return fmt.Errorf("destroy cgroup: %w", err)
	}
	return nil
}

// remove removes the cgroup's directories, retrying while the kernel still
// counts exiting processes in them.
func (c *Cgroup) remove(ctx context.Context) error {
	var errs []error
	for _, dir := range c.dirs() {
		err := poll(ctx, func() (bool, error) {
			err := c.filesystem().Rmdir(dir)
			switch {
			case err == nil || errors.Is(err, os.ErrNotExist):
				return true, nil
			case isBusy(err):
				return false, nil
			default:
				return false, err
			}
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// pollInterval is how often poll checks its condition.
const pollInterval = 10 * time.Millisecond

// staleRemoveTimeout bounds the removal of a cgroup left by an earlier run.
const staleRemoveTimeout = 10 * time.Second

// freezeTimeout bounds the wait for a cgroup to freeze before killing.
const freezeTimeout = time.Second

// poll calls check until it returns true or an error, or ctx is done.
func poll(ctx context.Context, check func() (bool, error)) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		ok, err := check()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// readUint reads a control file holding one number; "max" is 0.
func readUint(fsys cgroupFS, path string) (uint64, error) {
	b, err := fsys.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return v, nil
}

// readKeyed reads a "key value" per line control file (memory.stat,
// cpu.stat, memory.events, memory.oom_control).
func readKeyed(fsys cgroupFS, path string) (map[string]uint64, error) {
	b, err := fsys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64)
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

func writeInt(fsys cgroupFS, path string, v int64) error {
	if err := fsys.WriteFile(path, []byte(strconv.FormatInt(v, 10))); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func writeString(fsys cgroupFS, path, v string) error {
	if err := fsys.WriteFile(path, []byte(v)); err != nil {
		return fmt.Errorf("write %q to %s: %w", v, filepath.Base(path), err)
	}
	return nil
}

// hardAndSoftMemory returns the hard limit and, when oversubscribing, the
// soft limit.
func (r Resources) hardAndSoftMemory() (hard, soft int64) {
	hard = r.MemoryBytes
	if r.MemoryMaxBytes > r.MemoryBytes {
		hard, soft = r.MemoryMaxBytes, r.MemoryBytes
	}
	return hard, soft
}

// CPUPercent returns the CPU use between two readings elapsed apart, in
// percent of one core (200 is two cores busy); 0 when it cannot tell (no
// previous reading, no time passed, or a counter that went back).
func CPUPercent(prev, cur *Stats, elapsed time.Duration) float64 {
	if prev == nil || cur == nil || elapsed <= 0 || cur.CPUUsageNanos < prev.CPUUsageNanos {
		return 0
	}
	return float64(cur.CPUUsageNanos-prev.CPUUsageNanos) / float64(elapsed.Nanoseconds()) * 100
}

// SharesToWeight converts v1 cpu.shares (2..262144) to v2 cpu.weight
// (1..10000) linearly, as container runtimes do.
func SharesToWeight(shares int64) int64 {
	if shares <= 0 {
		return 0
	}
	shares = min(max(shares, 2), 262144)
	return 1 + ((shares-2)*9999)/262142
}

// isBusy reports whether rmdir failed because the cgroup still has
// processes (or, on a fake tree, files).
func isBusy(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOTEMPTY)
}
