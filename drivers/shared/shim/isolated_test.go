package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/testwait"
)

// testCgroupParent is the cgroup isolated test tasks run under.
const testCgroupParent = "drover-test-shim"

// isolatedSpec returns a spec running script with /bin/sh isolated as
// nobody in a fresh root, with memoryMB of memory (0: no limit). It skips
// the test unless it can create namespaces and cgroups.
func isolatedSpec(t *testing.T, script string, memoryMB int64) *Spec {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("isolated tasks need root")
	}
	if _, err := isolation.DetectCgroups(); err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(t, "")
	spec.Command, spec.Args, spec.Dir = "", nil, ""
	root := filepath.Join(filepath.Dir(spec.StateDir), "root")
	if err := os.MkdirAll(filepath.Join(root, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is 0700; nobody must reach its root.
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	_ = os.Chmod(filepath.Join(root, "local"), 0o777)
	spec.Isolation = &Isolation{
		Spec: isolation.Spec{
			Path:    "/bin/sh",
			Args:    []string{"-c", script},
			Env:     []string{"PATH=/usr/bin:/bin"},
			RootDir: root,
			Mounts:  isolation.ChrootMounts(isolation.DefaultChrootEnv()),
			UID:     65534,
			GID:     65534,
		},
		Cgroup: isolation.CgroupConfig{
			Parent:    testCgroupParent,
			Name:      strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()),
			Resources: isolation.Resources{MemoryBytes: memoryMB << 20},
		},
		Init: &isolation.InitCommand{Path: exe, Args: []string{isolation.InitArg}},
	}
	return spec
}

// cgroupGone reports whether none of cg's directories exists.
func cgroupGone(cg *isolation.Cgroup) bool {
	dirs := []string{cg.Path}
	for _, p := range cg.Paths {
		dirs = append(dirs, p)
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}

func TestIsolatedTask(t *testing.T) {
	tests := []struct {
		name   string
		script string
		mem    int64
		out    string
		code   int
		sig    int
		oom    bool
	}{
		{name: "pid 1 as nobody", script: `echo $$; id -u; set -- /proc/[0-9]*; echo $#; exit 3`, out: "1\n65534\n1\n", code: 3},
		{name: "oom kill is recorded", script: `exec tail /dev/zero`, mem: 16, code: 137, sig: 9, oom: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := isolatedSpec(t, tt.script, tt.mem)
			h := startShim(t, spec)
			st := h.State()
			if st.Cgroup == nil {
				t.Fatal("state of an isolated shim has no cgroup")
			}
			e, err := h.Wait(ctxT(t))
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if e.ExitCode != tt.code || e.Signal != tt.sig || e.OOMKilled != tt.oom {
				t.Fatalf("exit %+v, want code %d signal %d oom %v (stderr %q)", e, tt.code, tt.sig, tt.oom, logText(t, spec.StderrPath))
			}
			if tt.out != "" {
				if got := logText(t, spec.StdoutPath); got != tt.out {
					t.Errorf("stdout %q, want %q", got, tt.out)
				}
			}
			onDisk, err := readExit(spec.StateDir)
			if err != nil || onDisk == nil || onDisk.OOMKilled != tt.oom || onDisk.ExitCode != tt.code {
				t.Errorf("exit file = %+v, %v", onDisk, err)
			}
			if !cgroupGone(st.Cgroup) {
				t.Errorf("cgroup %+v still there after the exit was recorded", st.Cgroup)
			}
			if r := e.ExitResult(); r.OOMKilled != tt.oom {
				t.Errorf("ExitResult %+v", r)
			}
		})
	}
}

func TestIsolatedStopKillsTheCgroup(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		code    int
		sig     int
	}{
		// PID 1 without a handler ignores SIGINT: killed after the timeout.
		{"unhandled SIGINT", `sleep 1000 & echo ready; exec sleep 1000`, 300 * time.Millisecond, 137, 9},
		// The signal reaches every process of the cgroup.
		{"handled SIGINT", `trap 'exit 130' INT; sleep 1000 & echo ready; wait`, 20 * time.Second, 130, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := isolatedSpec(t, tt.script, 0)
			h := startShim(t, spec)
			waitForLog(t, spec.StdoutPath, "ready")
			st := h.State()
			pids, err := st.Cgroup.Pids()
			if err != nil || len(pids) < 2 {
				t.Fatalf("cgroup pids %v, %v; want the task and its child", pids, err)
			}
			u, err := h.Stats(ctxT(t))
			if err != nil || u.RSSBytes == 0 || u.Pids < 2 {
				t.Fatalf("Stats = %+v, %v", u, err)
			}
			start := time.Now()
			if err := h.Stop(ctxT(t), "SIGINT", tt.timeout); err != nil {
				t.Fatal(err)
			}
			if tt.sig == 9 && time.Since(start) < tt.timeout {
				t.Errorf("killed before the timeout")
			}
			e, err := h.Wait(ctxT(t))
			if err != nil || e.ExitCode != tt.code || e.Signal != tt.sig {
				t.Fatalf("exit %+v, %v; want %d/%d", e, err, tt.code, tt.sig)
			}
			for _, pid := range pids {
				if !pidGone(pid) {
					t.Errorf("process %d of the task survived the stop", pid)
				}
			}
			if !cgroupGone(st.Cgroup) {
				t.Errorf("cgroup still there")
			}
		})
	}
}

func TestIsolatedShimKilled(t *testing.T) {
	spec := isolatedSpec(t, `sleep 1000 & echo "child $!"; wait`, 0)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "child ")
	st := h.State()
	pids, err := st.Cgroup.Pids()
	if err != nil || len(pids) < 2 {
		t.Fatalf("cgroup pids %v, %v", pids, err)
	}
	if err := syscall.Kill(st.ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// A restarted agent attaches: the exit is unknown, nothing is left.
	var st2 State
	b, _ := json.Marshal(st)
	if err := json.Unmarshal(b, &st2); err != nil {
		t.Fatal(err)
	}
	testwait.Exit(t, "shim to die", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
	if _, err := Attach(ctxT(t), &st2); !errors.Is(err, ErrShimDied) {
		t.Fatalf("Attach = %v, want ErrShimDied", err)
	}
	for _, pid := range pids {
		if !pidGone(pid) {
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			t.Errorf("task process %d survived its shim: %s", pid, status)
		}
	}
	if !cgroupGone(st.Cgroup) {
		t.Error("cgroup of a task whose shim died is still there")
	}
}

func TestIsolatedSpecValidation(t *testing.T) {
	tests := []struct {
		name string
		iso  *Isolation
		user string
		want string
	}{
		{"no command", &Isolation{Cgroup: isolation.CgroupConfig{Parent: "p", Name: "n"}}, "", "isolation: command is empty"},
		{"no cgroup", &Isolation{Spec: isolation.Spec{Path: "/bin/true"}}, "", "cgroup parent and name"},
		{"user", &Isolation{Spec: isolation.Spec{Path: "/bin/true"}, Cgroup: isolation.CgroupConfig{Parent: "p", Name: "n"}}, "nobody", "not in User"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Spec{StdoutPath: "/o", StderrPath: "/e", StateDir: "/s", Isolation: tt.iso, User: tt.user}
			if _, err := s.validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("validate = %v, want %q", err, tt.want)
			}
		})
	}
}
