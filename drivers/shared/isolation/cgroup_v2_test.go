package isolation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeFS is a cgroup tree in a temporary directory: writes create files,
// and rmdir removes a directory with its (regular) control files.
type fakeFS struct{}

func (fakeFS) ReadFile(p string) ([]byte, error)  { return os.ReadFile(p) }
func (fakeFS) WriteFile(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
func (fakeFS) Mkdir(p string) error               { return os.Mkdir(p, 0o755) }
func (fakeFS) Rmdir(p string) error {
	if _, err := os.Stat(p); err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// fakeV2 returns the root of a fake unified hierarchy.
func fakeV2(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "cgroup.controllers"), "cpuset cpu io memory pids")
	writeFile(t, filepath.Join(root, "cgroup.subtree_control"), "")
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestCgroupV2Create(t *testing.T) {
	cases := []struct {
		name  string
		res   Resources
		files map[string]string // relative to the task cgroup; "" = absent
	}{
		{
			name: "hard limit only",
			res:  Resources{MemoryBytes: 256 << 20, CPUShares: 500, PidsMax: 100},
			files: map[string]string{
				"memory.max": "268435456", "memory.low": "", "memory.swap.max": "0",
				"cpu.weight": "19", "pids.max": "100", "cpuset.cpus": "",
			},
		},
		{
			name: "oversubscribed memory and cpuset",
			res:  Resources{MemoryBytes: 100 << 20, MemoryMaxBytes: 200 << 20, CPUShares: 1024, Cpuset: "0-1", Mems: "0"},
			files: map[string]string{
				"memory.max": "209715200", "memory.low": "104857600",
				"cpu.weight": "39", "pids.max": "", "cpuset.cpus": "0-1", "cpuset.mems": "0",
			},
		},
		{
			name:  "no limits",
			files: map[string]string{"memory.max": "", "cpu.weight": "", "pids.max": ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeV2(t)
			layout := &CgroupLayout{Version: CgroupV2, Root: root}
			cg, err := newCgroup(layout, CgroupConfig{Parent: "drover", Name: "a1.web", Resources: tc.res}, fakeFS{})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, "drover", "a1.web"); cg.Path != want {
				t.Fatalf("path %s, want %s", cg.Path, want)
			}
			for _, dir := range []string{root, filepath.Join(root, "drover")} {
				got := readFile(t, filepath.Join(dir, "cgroup.subtree_control"))
				if !strings.HasPrefix(got, "+memory +cpu +pids") {
					t.Errorf("%s/cgroup.subtree_control = %q, want the controllers enabled", dir, got)
				}
			}
			for f, want := range tc.files {
				b, err := os.ReadFile(filepath.Join(cg.Path, f))
				if want == "" {
					if err == nil {
						t.Errorf("%s = %q, want it unset", f, b)
					}
					continue
				}
				if err != nil || strings.TrimSpace(string(b)) != want {
					t.Errorf("%s = %q (%v), want %q", f, b, err, want)
				}
			}
		})
	}
}

func TestCgroupV2StatsOOMKillDestroy(t *testing.T) {
	root := fakeV2(t)
	cg, err := newCgroup(&CgroupLayout{Version: CgroupV2, Root: root}, CgroupConfig{Parent: "drover", Name: "a1.web"}, fakeFS{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cg.Path, "memory.current"), "1048576\n")
	writeFile(t, filepath.Join(cg.Path, "memory.peak"), "2097152\n")
	writeFile(t, filepath.Join(cg.Path, "memory.stat"), "anon 524288\nfile 262144\nkernel 4096\n")
	writeFile(t, filepath.Join(cg.Path, "cpu.stat"), "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n")
	writeFile(t, filepath.Join(cg.Path, "pids.current"), "3\n")
	writeFile(t, filepath.Join(cg.Path, "cgroup.procs"), "")
	writeFile(t, filepath.Join(cg.Path, "memory.events"), "low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\n")

	st, err := cg.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{MemoryUsage: 1 << 20, MemoryMaxUsage: 2 << 20, MemoryRSS: 512 << 10, MemoryCache: 256 << 10,
		CPUUsageNanos: 1500000, CPUUserNanos: 1000000, CPUSystemNanos: 500000, Pids: 3}
	if *st != want {
		t.Fatalf("stats %+v, want %+v", *st, want)
	}

	if oom, err := cg.OOMKilled(); err != nil || oom {
		t.Fatalf("OOMKilled = %v, %v before any kill", oom, err)
	}
	writeFile(t, filepath.Join(cg.Path, "memory.events"), "oom 1\noom_kill 1\n")
	if oom, err := cg.OOMKilled(); err != nil || !oom {
		t.Fatalf("OOMKilled = %v, %v after an OOM kill", oom, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cg.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(cg.Path, "cgroup.kill")); got != "1" {
		t.Fatalf("cgroup.kill = %q, want 1", got)
	}
	if err := cg.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cg.Path); !os.IsNotExist(err) {
		t.Fatalf("cgroup still there after Destroy: %v", err)
	}
	if err := cg.Destroy(ctx); err != nil {
		t.Fatalf("second Destroy: %v", err)
	}
}

func TestCgroupV2ApplyAndPids(t *testing.T) {
	root := fakeV2(t)
	cg, err := newCgroup(&CgroupLayout{Version: CgroupV2, Root: root}, CgroupConfig{Parent: "a/b", Name: "t"}, fakeFS{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cg.Apply(42); err != nil {
		t.Fatal(err)
	}
	pids, err := cg.Pids()
	if err != nil || len(pids) != 1 || pids[0] != 42 {
		t.Fatalf("Pids = %v, %v; want [42]", pids, err)
	}
	for _, bad := range []CgroupConfig{{Parent: "../x", Name: "t"}, {Parent: "drover", Name: "a/b"}, {Parent: "drover", Name: ""}} {
		if _, err := newCgroup(&CgroupLayout{Version: CgroupV2, Root: root}, bad, fakeFS{}); err == nil {
			t.Errorf("newCgroup(%+v) succeeded, want an invalid name error", bad)
		}
	}
}

func TestSharesToWeight(t *testing.T) {
	cases := []struct{ shares, weight int64 }{
		{0, 0}, {2, 1}, {1024, 39}, {262144, 10000}, {1 << 30, 10000}, {1, 1},
	}
	for _, tc := range cases {
		if got := SharesToWeight(tc.shares); got != tc.weight {
			t.Errorf("SharesToWeight(%d) = %d, want %d", tc.shares, got, tc.weight)
		}
	}
}

func TestCPUPercent(t *testing.T) {
	cases := []struct {
		name      string
		prev, cur *Stats
		elapsed   time.Duration
		want      float64
	}{
		{"one core busy", &Stats{CPUUsageNanos: 1e9}, &Stats{CPUUsageNanos: 2e9}, time.Second, 100},
		{"two cores busy", &Stats{CPUUsageNanos: 0}, &Stats{CPUUsageNanos: 1e9}, 500 * time.Millisecond, 200},
		{"idle", &Stats{CPUUsageNanos: 5}, &Stats{CPUUsageNanos: 5}, time.Second, 0},
		{"no previous reading", nil, &Stats{CPUUsageNanos: 5}, time.Second, 0},
		{"counter went back", &Stats{CPUUsageNanos: 9}, &Stats{CPUUsageNanos: 5}, time.Second, 0},
		{"no time passed", &Stats{}, &Stats{CPUUsageNanos: 5}, 0, 0},
	}
	for _, tc := range cases {
		if got := CPUPercent(tc.prev, tc.cur, tc.elapsed); got != tc.want {
			t.Errorf("%s: CPUPercent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
