package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// proc is one process seen in /proc.
type proc struct {
	pid, ppid int
	args      []string
}

// listProcs reads every process's pid, parent and command line from /proc.
// Processes that exit while it reads are left out.
func listProcs() ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		p, err := readProc(pid)
		if err != nil {
			continue // gone meanwhile, or a kernel thread
		}
		out = append(out, p)
	}
	return out, nil
}

// readProc reads one process; a zombie or a kernel thread (empty command
// line) is an error, as it runs nothing.
func readProc(pid int) (proc, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return proc{}, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("pid %d: malformed stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return proc{}, fmt.Errorf("pid %d: malformed stat", pid)
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return proc{}, fmt.Errorf("pid %d is a zombie", pid)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return proc{}, fmt.Errorf("pid %d: parent: %w", pid, err)
	}
	raw, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return proc{}, err
	}
	raw = bytes.TrimSuffix(raw, []byte{0})
	if len(raw) == 0 {
		return proc{}, fmt.Errorf("pid %d has no command line", pid)
	}
	return proc{pid: pid, ppid: ppid, args: strings.Split(string(raw), "\x00")}, nil
}

// alive reports whether pid runs and is no zombie.
func alive(pid int) bool {
	_, err := readProc(pid)
	return err == nil
}

// procEnv returns the value of key in the environment pid started with.
func procEnv(pid int, key string) (string, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", err
	}
	for _, kv := range strings.Split(string(raw), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("pid %d has no %s in its environment", pid, key)
}

// taskTree is the shims of one agent's data dir and the processes they
// supervise.
type taskTree struct {
	shims    map[int]string // shim pid -> its state dir
	tasks    map[int]int    // task pid (a shim's child) -> its shim's pid
	marked   []int          // processes running the test's marker command
	allProcs []proc
}

// scanTasks finds the shims whose state dir lies under dataDir (detached
// shims run "<drover> shim -state-dir <dir> -detached"), their children
// (the tasks' main processes), and every process whose command line is
// exactly marker (wherever it runs), so duplicates started outside a shim
// are counted too.
func scanTasks(dataDir string, marker []string) (*taskTree, error) {
	ps, err := listProcs()
	if err != nil {
		return nil, err
	}
	tt := &taskTree{shims: map[int]string{}, tasks: map[int]int{}, allProcs: ps}
	for _, p := range ps {
		if dir, ok := shimStateDirArg(p.args); ok && underDir(dir, dataDir) {
			tt.shims[p.pid] = dir
		}
	}
	for _, p := range ps {
		if _, ok := tt.shims[p.ppid]; ok {
			tt.tasks[p.pid] = p.ppid
		}
		if len(marker) > 0 && equalArgs(p.args, marker) {
			tt.marked = append(tt.marked, p.pid)
		}
	}
	return tt, nil
}

// shimStateDirArg returns the -state-dir of a shim's command line.
func shimStateDirArg(args []string) (string, bool) {
	if len(args) < 3 || args[1] != "shim" {
		return "", false
	}
	for i := 2; i < len(args); i++ {
		if args[i] == "-state-dir" && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(args[i], "-state-dir="); ok {
			return v, true
		}
	}
	return "", false
}

// underDir reports whether path lies inside dir.
func underDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func equalArgs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// killLeftovers SIGKILLs every shim under dataDir and the process group of
// each of its tasks (the shim starts a task in a group of its own), so a
// failed test leaves nothing running. It reports what it had to kill.
func killLeftovers(t *testing.T, dataDir string) {
	t.Helper()
	tt, err := scanTasks(dataDir, nil)
	if err != nil {
		t.Errorf("look for leftover processes: %v", err)
		return
	}
	for task := range tt.tasks {
		if err := syscall.Kill(-task, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Logf("kill task group %d: %v", task, err)
		}
	}
	for shim, dir := range tt.shims {
		if err := syscall.Kill(shim, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Logf("kill shim %d: %v", shim, err)
		}
		t.Logf("killed a leftover shim %d (state dir %s)", shim, dir)
	}
	unmountLeftovers(t, dataDir)
}

// unmountLeftovers unmounts what a non-dev agent left mounted under
// dataDir (the tmpfs of its tasks' secrets directories, which outlive the
// agent as its tasks do), deepest first, so that the test's temporary
// directory can be removed.
func unmountLeftovers(t *testing.T, dataDir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Logf("look for leftover mounts: %v", err)
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// Field 5 is the mount point; mountinfo escapes a space as \040,
		// which a temporary directory's path does not hold.
		if len(f) > 4 && strings.HasPrefix(f[4], dataDir+"/") {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			t.Logf("unmount leftover %s: %v", p, err)
		}
	}
}

// writeTrigger creates an empty file a task waits for.
func writeTrigger(path string) error {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("write trigger: %w", err)
	}
	return nil
}
