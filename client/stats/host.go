package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HostStats is one sample of the host's resource usage.
type HostStats struct {
	Memory *MemoryStats
	// CPU has one entry per CPU ("cpu0", "cpu1", ...) in /proc/stat
	// order; percentages are over the time since the previous Collect
	// (since boot for the first).
	CPU []*CPUStats
	// AllocDirDisk is the file system of the allocation directory.
	AllocDirDisk *DiskStats
	// Uptime is in seconds.
	Uptime uint64
	// CPUTicksConsumed is the MHz the CPUs were busy for (TicksConsumed);
	// Collect leaves it 0.
	CPUTicksConsumed float64
	Timestamp        time.Time
}

// TicksConsumed returns the MHz the CPUs were busy for, given their total
// speed in MHz: the busy share (100 - idle percent) of each CPU's part.
func (h *HostStats) TicksConsumed(totalMHz int64) float64 {
	if len(h.CPU) == 0 || totalMHz <= 0 {
		return 0
	}
	perCPU := float64(totalMHz) / float64(len(h.CPU))
	var busy float64
	for _, c := range h.CPU {
		busy += (100 - c.Idle) / 100 * perCPU
	}
	return busy
}

// MemoryStats is the host's memory in bytes.
type MemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// CPUStats is one CPU's use in percent.
type CPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// DiskStats is a file system's usage.
type DiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// HostConfig configures a HostCollector.
type HostConfig struct {
	// ProcDir is the proc file system; "" means /proc.
	ProcDir string
	// AllocDir is the directory whose file system is measured; "" means
	// none.
	AllocDir string
	// Statfs measures the file system holding a path; nil means statfs(2).
	Statfs func(path string) (FSUsage, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// FSUsage is what statfs reports of a file system.
type FSUsage struct {
	Size, Free, Available uint64 // bytes
	Inodes, InodesFree    uint64
}

// HostCollector samples the host's usage. Its methods are safe for
// concurrent use; it keeps the previous CPU counters to compute
// percentages.
type HostCollector struct {
	cfg HostConfig

	mu sync.Mutex // guards the field below
	// prevCPU are the counters of the previous Collect, by CPU name.
	prevCPU map[string]cpuTimes
}

// NewHostCollector returns a HostCollector; it reads nothing yet.
func NewHostCollector(cfg HostConfig) *HostCollector {
	if cfg.ProcDir == "" {
		cfg.ProcDir = "/proc"
	}
	if cfg.Statfs == nil {
		cfg.Statfs = statfs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &HostCollector{cfg: cfg, prevCPU: map[string]cpuTimes{}}
}

// Collect samples the host. A source that cannot be read leaves its part
// nil (or zero) and is reported in the error; the rest is still returned.
func (h *HostCollector) Collect() (*HostStats, error) {
	out := &HostStats{Timestamp: h.cfg.Now()}
	var errs []string
	var err error
	if out.Memory, err = h.memory(); err != nil {
		errs = append(errs, err.Error())
	}
	if out.CPU, err = h.cpu(); err != nil {
		errs = append(errs, err.Error())
	}
	if out.Uptime, err = h.uptime(); err != nil {
		errs = append(errs, err.Error())
	}
	if h.cfg.AllocDir != "" {
		if out.AllocDirDisk, err = h.disk(h.cfg.AllocDir); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("host stats: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// memory reads meminfo.
func (h *HostCollector) memory() (*MemoryStats, error) {
	b, err := os.ReadFile(filepath.Join(h.cfg.ProcDir, "meminfo"))
	if err != nil {
		return nil, fmt.Errorf("read meminfo: %w", err)
	}
	bytesOf := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		bytesOf[k] = n
	}
	m := &MemoryStats{Total: bytesOf["MemTotal"], Available: bytesOf["MemAvailable"], Free: bytesOf["MemFree"]}
	if m.Total >= m.Available {
		m.Used = m.Total - m.Available
	}
	return m, nil
}

// uptime reads the seconds since boot.
func (h *HostCollector) uptime() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(h.cfg.ProcDir, "uptime"))
	if err != nil {
		return 0, fmt.Errorf("read uptime: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("read uptime: empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("read uptime: %w", err)
	}
	return uint64(v), nil
}

// cpuTimes are a CPU's counters (in ticks) from /proc/stat.
type cpuTimes struct {
	user, system, idle, total uint64
}

// cpu reads /proc/stat and returns each CPU's use since the previous call.
func (h *HostCollector) cpu() ([]*CPUStats, error) {
	b, err := os.ReadFile(filepath.Join(h.cfg.ProcDir, "stat"))
	if err != nil {
		return nil, fmt.Errorf("read stat: %w", err)
	}
	cur, order := parseProcStat(b)
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*CPUStats, 0, len(order))
	for _, name := range order {
		now, prev := cur[name], h.prevCPU[name]
		if now.total < prev.total { // counters reset (CPU hot-plug): start over
			prev = cpuTimes{}
		}
		out = append(out, cpuPercent(name, prev, now))
	}
	h.prevCPU = cur
	return out, nil
}

// parseProcStat returns the counters of the per-CPU lines ("cpuN") of
// /proc/stat, and their names in order. Fields: user nice system idle
// iowait irq softirq steal [guest guest_nice, already in user and nice].
func parseProcStat(b []byte) (map[string]cpuTimes, []string) {
	out := map[string]cpuTimes{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= len(v); i++ {
			v[i-1], _ = strconv.ParseUint(f[i], 10, 64)
		}
		t := cpuTimes{user: v[0] + v[1], system: v[2] + v[5] + v[6], idle: v[3] + v[4]}
		for _, x := range v {
			t.total += x
		}
		out[f[0]] = t
		order = append(order, f[0])
	}
	return out, order
}

func cpuPercent(name string, prev, now cpuTimes) *CPUStats {
	total := float64(now.total - prev.total)
	if total <= 0 {
		return &CPUStats{CPU: name, Idle: 100}
	}
	pct := func(a, b uint64) float64 {
		if a < b {
			return 0
		}
		return float64(a-b) / total * 100
	}
	return &CPUStats{CPU: name, User: pct(now.user, prev.user), System: pct(now.system, prev.system), Idle: pct(now.idle, prev.idle)}
}

// disk measures the file system holding path and names its device and
// mount point from the mount table.
func (h *HostCollector) disk(path string) (*DiskStats, error) {
	u, err := h.cfg.Statfs(path)
	if err != nil {
		return nil, err
	}
	d := &DiskStats{Size: u.Size, Available: u.Available}
	if u.Size >= u.Free {
		d.Used = u.Size - u.Free
	}
	if d.Used+d.Available > 0 {
		d.UsedPercent = float64(d.Used) / float64(d.Used+d.Available) * 100
	}
	if u.Inodes > 0 && u.Inodes >= u.InodesFree {
		d.InodesUsedPercent = float64(u.Inodes-u.InodesFree) / float64(u.Inodes) * 100
	}
	if b, err := os.ReadFile(filepath.Join(h.cfg.ProcDir, "self", "mounts")); err == nil {
		d.Device, d.Mountpoint = mountOf(b, path)
	}
	return d, nil
}

// mountOf returns the device and mount point of the longest mount point
// in the mount table that holds path.
func mountOf(table []byte, path string) (device, mountpoint string) {
	path = filepath.Clean(path)
	for _, line := range strings.Split(string(table), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		mp := unescapeMount(f[1])
		if !within(path, mp) || len(mp) < len(mountpoint) {
			continue
		}
		device, mountpoint = f[0], mp
	}
	return device, mountpoint
}

func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// unescapeMount undoes the octal escapes of /proc/self/mounts ("\040"
// for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
