package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the tick counts in /proc/<pid>/stat. The kernel
// exports them in USER_HZ, which is 100 on every architecture Linux
// supports today (sysconf(_SC_CLK_TCK) would need cgo).
const userHZ = 100

// procStat holds the fields of /proc/<pid>/stat the shim uses.
type procStat struct {
	state      byte
	ppid       int
	pgrp       int
	session    int
	utime      uint64 // ticks
	stime      uint64 // ticks
	cutime     uint64 // ticks of reaped children
	cstime     uint64 // ticks of reaped children
	startTicks uint64 // ticks after boot
	rssPages   uint64
}

// readProcStat reads /proc/<pid>/stat; an error wrapping os.ErrNotExist
// means there is no such process.
func readProcStat(pid int) (*procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	return parseProcStat(b)
}

// parseProcStat parses the contents of a /proc/<pid>/stat file. The command
// name (field 2) may contain spaces and parentheses, so fields are counted
// from the last ')'.
func parseProcStat(b []byte) (*procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+2:])) // f[0] is field 3 (state)
	if len(f) < 22 {
		return nil, errors.New("short /proc stat")
	}
	num := func(field int) uint64 {
		n, _ := strconv.ParseUint(f[field-3], 10, 64)
		return n
	}
	sint := func(field int) int {
		n, _ := strconv.Atoi(f[field-3])
		return n
	}
	return &procStat{
		state:      f[0][0],
		ppid:       sint(4),
		pgrp:       sint(5),
		session:    sint(6),
		utime:      num(14),
		stime:      num(15),
		cutime:     num(16),
		cstime:     num(17),
		startTicks: num(22),
		rssPages:   num(24),
	}, nil
}

// bootID returns the kernel's boot id, which changes at every boot.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// processAlive reports whether pid is the live (not zombie) process that
// started at startTicks in the boot bootID.
func processAlive(pid int, startTicks uint64, boot string) bool {
	if pid <= 0 || (boot != "" && boot != bootID()) {
		return false
	}
	st, err := readProcStat(pid)
	if err != nil {
		return false
	}
	return st.startTicks == startTicks && st.state != 'Z' && st.state != 'X'
}

// eachProcess calls fn for every process in /proc whose stat it can read.
func eachProcess(fn func(pid int, st *procStat)) error {
	d, err := os.Open("/proc")
	if err != nil {
		return fmt.Errorf("read /proc: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("read /proc: %w", err)
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			fn(pid, st)
		}
	}
	return nil
}

// killOrphans sends SIGKILL to every process left in process group pgid
// of session sid: a task's processes after its shim died. Matching the
// session as well as the group keeps a reused pgid from hitting strangers.
func killOrphans(pgid, sid int) {
	if pgid <= 0 || sid <= 0 {
		return
	}
	_ = eachProcess(func(pid int, st *procStat) {
		if st.pgrp == pgid && st.session == sid {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}
