package harness

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mem is a process's resident memory, in KiB, from
// /proc/<pid>/smaps_rollup.
type Mem struct {
	RSS, PSS, PrivateDirty, Anonymous int64
}

// ReadMem reads pid's memory from /proc/<pid>/smaps_rollup.
func ReadMem(pid int) (Mem, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return Mem{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	var m Mem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			m.RSS = v
		case "Pss:":
			m.PSS = v
		case "Private_Dirty:":
			m.PrivateDirty = v
		case "Anonymous:":
			m.Anonymous = v
		}
	}
	if err := sc.Err(); err != nil {
		return Mem{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	return m, nil
}

// MiB formats KiB as MiB with one decimal.
func MiB(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
