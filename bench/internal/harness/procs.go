package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one process seen in /proc.
type Proc struct {
	PID, PPID int
	Args      []string
}

// ReadProc reads one process; a zombie or a kernel thread is an error.
func ReadProc(pid int) (Proc, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Proc{}, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Proc{}, fmt.Errorf("pid %d: malformed stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || fields[0] == "Z" || fields[0] == "X" {
		return Proc{}, fmt.Errorf("pid %d: not running", pid)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return Proc{}, fmt.Errorf("pid %d: parent: %w", pid, err)
	}
	raw, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return Proc{}, err
	}
	raw = bytes.TrimSuffix(raw, []byte{0})
	if len(raw) == 0 {
		return Proc{}, fmt.Errorf("pid %d has no command line", pid)
	}
	return Proc{PID: pid, PPID: ppid, Args: strings.Split(string(raw), "\x00")}, nil
}

// Alive reports whether pid runs and is no zombie.
func Alive(pid int) bool {
	_, err := ReadProc(pid)
	return err == nil
}

// Tree is the shims of one data dir and their children (the tasks).
type Tree struct {
	Shims map[int]string // shim pid -> state dir
	Tasks map[int]int    // task pid -> shim pid
}

// ScanTree finds the detached shims whose -state-dir lies under dataDir,
// and their children.
func ScanTree(dataDir string) (*Tree, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var ps []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := ReadProc(pid); err == nil {
			ps = append(ps, p)
		}
	}
	t := &Tree{Shims: map[int]string{}, Tasks: map[int]int{}}
	for _, p := range ps {
		if len(p.Args) < 3 || p.Args[1] != "shim" {
			continue
		}
		for i := 2; i+1 < len(p.Args); i++ {
			if p.Args[i] == "-state-dir" {
				if rel, err := filepath.Rel(dataDir, p.Args[i+1]); err == nil && !strings.HasPrefix(rel, "..") {
					t.Shims[p.PID] = p.Args[i+1]
				}
			}
		}
	}
	for _, p := range ps {
		if _, ok := t.Shims[p.PPID]; ok {
			t.Tasks[p.PID] = p.PPID
		}
	}
	return t, nil
}
