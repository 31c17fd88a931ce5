package isolation

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessStartTime returns when pid started, in clock ticks after boot
// (/proc/<pid>/stat field 22): with the pid it names one process for good,
// as pids are reused.
func ProcessStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	state, start, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	if state == 'Z' || state == 'X' {
		return 0, fmt.Errorf("process %d: %w", pid, os.ErrNotExist)
	}
	return start, nil
}

// Alive reports whether pid runs (and is not a zombie) and started at
// startTime.
func Alive(pid int, startTime uint64) bool {
	st, err := ProcessStartTime(pid)
	return err == nil && st == startTime
}

// parseStat returns the state and start time from a /proc/<pid>/stat
// line. The command name may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(b []byte) (state byte, start uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 20 {
		return 0, 0, errors.New("short /proc stat")
	}
	start, err = strconv.ParseUint(f[22-3], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("malformed /proc stat start time: %w", err)
	}
	return f[0][0], start, nil
}
