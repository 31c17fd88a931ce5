package rawexec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc/<pid>/stat; it is
// 100 on every Linux platform Go supports.
const clockTicks = 100

// procStat is what we use of /proc/<pid>/stat.
type procStat struct {
	State     byte
	Pgrp      int
	Utime     uint64 // clock ticks
	Stime     uint64 // clock ticks
	StartTime uint64 // clock ticks after boot
}

// errNoProcess means the pid does not exist.
var errNoProcess = errors.New("no such process")

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (*procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errNoProcess
		}
		return nil, err
	}
	return parseProcStat(b)
}

// parseProcStat parses a /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseProcStat(b []byte) (*procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat: no command name")
	}
	// fields[0] is field 3 (state).
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return nil, fmt.Errorf("malformed /proc stat: %d fields", len(fields)+2)
	}
	num := func(idx int) (uint64, error) { return strconv.ParseUint(fields[idx-3], 10, 64) }
	st := &procStat{State: fields[0][0]}
	pgrp, err := num(5)
	if err != nil {
		return nil, fmt.Errorf("malformed /proc stat pgrp: %w", err)
	}
	st.Pgrp = int(pgrp)
	if st.Utime, err = num(14); err != nil {
		return nil, fmt.Errorf("malformed /proc stat utime: %w", err)
	}
	if st.Stime, err = num(15); err != nil {
		return nil, fmt.Errorf("malformed /proc stat stime: %w", err)
	}
	if st.StartTime, err = num(22); err != nil {
		return nil, fmt.Errorf("malformed /proc stat starttime: %w", err)
	}
	return st, nil
}

// alive reports whether pid is a live (not zombie) process started at
// startTime.
func alive(pid int, startTime uint64) bool {
	st, err := readProcStat(pid)
	if err != nil {
		return false
	}
	return st.StartTime == startTime && st.State != 'Z' && st.State != 'X'
}

// readRSS returns VmRSS from /proc/<pid>/status in bytes (0 for a zombie
// or kernel thread).
func readRSS(pid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "VmRSS:") {
			continue
		}
		fields := strings.Fields(strings.TrimPrefix(line, "VmRSS:"))
		if len(fields) == 0 {
			return 0, errors.New("malformed VmRSS line")
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed VmRSS: %w", err)
		}
		return kb * 1024, nil
	}
	return 0, sc.Err()
}

// groupMembers returns the pids of the live processes in process group
// pgid.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.Pgrp != pgid || st.State == 'Z' || st.State == 'X' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// cpuMHz returns the first CPU's clock in MHz from /proc/cpuinfo, or 0.
func cpuMHz() float64 {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return mhz
			}
		}
	}
	return 0
}
