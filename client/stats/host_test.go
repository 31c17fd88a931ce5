package stats

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// writeProc writes a fake proc directory.
func writeProc(t *testing.T, dir, stat string) {
	t.Helper()
	files := map[string]string{
		"meminfo": "MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\nBuffers: 1 kB\n",
		"uptime":  "12345.67 999.0\n",
		"stat":    stat,
		"self/mounts": "rootfs / rootfs rw 0 0\n/dev/sda1 / ext4 rw 0 0\n" +
			"/dev/sdb1 /var/lib/drover ext4 rw 0 0\n/dev/sdc1 /var/lib/drover\\040x xfs rw 0 0\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestHostCollector(t *testing.T) {
	proc := t.TempDir()
	// cpu0: user nice system idle iowait irq softirq steal
	writeProc(t, proc, "cpu  10 0 10 80 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\nintr 1\n")
	now := time.Unix(100, 0)
	h := NewHostCollector(HostConfig{
		ProcDir:  proc,
		AllocDir: "/var/lib/drover/alloc",
		Now:      func() time.Time { return now },
		Statfs: func(string) (FSUsage, error) {
			return FSUsage{Size: 1000, Free: 400, Available: 300, Inodes: 100, InodesFree: 75}, nil
		},
	})
	got, err := h.Collect()
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Memory; m.Total != 1000*1024 || m.Available != 600*1024 || m.Free != 200*1024 || m.Used != 400*1024 {
		t.Errorf("memory = %+v", m)
	}
	if got.Uptime != 12345 || !got.Timestamp.Equal(now) {
		t.Errorf("uptime, timestamp = %d, %v", got.Uptime, got.Timestamp)
	}
	if len(got.CPU) != 2 || got.CPU[0].CPU != "cpu0" || !near(got.CPU[0].User, 10) || !near(got.CPU[0].System, 10) || !near(got.CPU[0].Idle, 80) {
		t.Fatalf("first cpu sample (since boot) = %+v", got.CPU[0])
	}
	d := got.AllocDirDisk
	if d.Device != "/dev/sdb1" || d.Mountpoint != "/var/lib/drover" || d.Size != 1000 || d.Used != 600 || d.Available != 300 ||
		!near(d.UsedPercent, 600.0/900*100) || !near(d.InodesUsedPercent, 25) {
		t.Errorf("disk = %+v", d)
	}

	// The second sample is the delta: cpu0 spent 30 of 60 ticks in user,
	// 30 idle (20 idle + 10 iowait).
	writeProc(t, proc, "cpu0 40 0 10 100 10 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n")
	got, err = h.Collect()
	if err != nil {
		t.Fatal(err)
	}
	if c := got.CPU[0]; !near(c.User, 50) || !near(c.System, 0) || !near(c.Idle, 50) {
		t.Errorf("delta cpu0 = %+v, want 50%% user, 50%% idle", c)
	}
	if c := got.CPU[1]; !near(c.Idle, 100) {
		t.Errorf("idle cpu1 without ticks = %+v, want 100%% idle", c)
	}
}

func TestHostCollectorPartialFailure(t *testing.T) {
	h := NewHostCollector(HostConfig{
		ProcDir:  t.TempDir(), // empty: nothing readable
		AllocDir: "/x",
		Statfs:   func(string) (FSUsage, error) { return FSUsage{}, errors.New("statfs: boom") },
	})
	got, err := h.Collect()
	if err == nil || got == nil {
		t.Fatalf("Collect() = %+v, %v; want a partial result and an error", got, err)
	}
	if got.Memory != nil || got.CPU != nil || got.AllocDirDisk != nil {
		t.Errorf("unreadable parts should be nil: %+v", got)
	}
}

// TestHostCollectorReal reads this machine's /proc (Linux only).
func TestHostCollectorReal(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	got, err := NewHostCollector(HostConfig{AllocDir: t.TempDir()}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory.Total == 0 || len(got.CPU) == 0 || got.AllocDirDisk.Size == 0 || got.AllocDirDisk.Mountpoint == "" {
		t.Errorf("real host stats incomplete: mem %+v cpus %d disk %+v", got.Memory, len(got.CPU), got.AllocDirDisk)
	}
}

func TestMountOf(t *testing.T) {
	table := []byte("/dev/a / ext4 rw 0 0\n/dev/b /data ext4 rw 0 0\n/dev/c /data2 ext4 rw 0 0\n/dev/d /sp\\040ace ext4 rw 0 0\n")
	tests := []struct{ path, dev, mp string }{
		{"/data/x/y", "/dev/b", "/data"},
		{"/data2", "/dev/c", "/data2"},
		{"/datax", "/dev/a", "/"},
		{"/sp ace/z", "/dev/d", "/sp ace"},
	}
	for _, tt := range tests {
		dev, mp := mountOf(table, tt.path)
		if dev != tt.dev || mp != tt.mp {
			t.Errorf("mountOf(%q) = %q, %q; want %q, %q", tt.path, dev, mp, tt.dev, tt.mp)
		}
	}
}

func TestSumTasks(t *testing.T) {
	tests := []struct {
		name  string
		tasks map[string]*drivers.TaskResourceUsage
		want  *drivers.TaskResourceUsage
	}{
		{"none", nil, nil},
		{"only nil samples", map[string]*drivers.TaskResourceUsage{"a": nil}, nil},
		{"two tasks", map[string]*drivers.TaskResourceUsage{
			"a": {Timestamp: 5, CPUPercent: 10, CPUTotalTicks: 100, MemoryRSS: 1, MemoryCache: 2, MemorySwap: 3, MemoryMaxUsage: 4},
			"b": {Timestamp: 7, CPUPercent: 2.5, CPUTotalTicks: 25, MemoryRSS: 10, MemoryCache: 20, MemorySwap: 30, MemoryMaxUsage: 40},
			"c": nil,
		}, &drivers.TaskResourceUsage{Timestamp: 7, CPUPercent: 12.5, CPUTotalTicks: 125, MemoryRSS: 11, MemoryCache: 22, MemorySwap: 33, MemoryMaxUsage: 44}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SumTasks(tt.tasks)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SumTasks = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTicksConsumed(t *testing.T) {
	hs := &HostStats{CPU: []*CPUStats{{Idle: 75}, {Idle: 100}}}
	if got := hs.TicksConsumed(4000); !near(got, 500) {
		t.Errorf("TicksConsumed(4000) = %v, want 500 (a quarter of one 2000 MHz CPU)", got)
	}
	if got := (&HostStats{}).TicksConsumed(4000); got != 0 {
		t.Errorf("without CPUs = %v", got)
	}
}
