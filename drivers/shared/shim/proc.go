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
// means there is no such process. It allocates nothing but the path: the
// shim reads one per task process for every stats request.
func readProcStat(pid int) (procStat, error) {
	var buf [1024]byte
	b, err := readSmallFile("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return procStat{}, &os.PathError{Op: "read", Path: "/proc/" + strconv.Itoa(pid) + "/stat", Err: err}
	}
	return parseProcStat(b)
}

// parseProcStat parses the contents of a /proc/<pid>/stat file. The command
// name (field 2) may contain spaces and parentheses, so fields are counted
// from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procStat{}, errors.New("malformed /proc stat")
	}
	var st procStat
	rest := b[i+1:]
	field := 2
	for field < 24 {
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		if len(rest) == 0 || rest[0] == '\n' {
			return procStat{}, errors.New("short /proc stat")
		}
		field++
		j := 0
		for j < len(rest) && rest[j] != ' ' && rest[j] != '\n' {
			j++
		}
		f := rest[:j]
		rest = rest[j:]
		switch field {
		case 3:
			st.state = f[0]
		case 4:
			st.ppid = int(atou(f))
		case 5:
			st.pgrp = int(atou(f))
		case 6:
			st.session = int(atou(f))
		case 14:
			st.utime = atou(f)
		case 15:
			st.stime = atou(f)
		case 16:
			st.cutime = atou(f)
		case 17:
			st.cstime = atou(f)
		case 22:
			st.startTicks = atou(f)
		case 24:
			st.rssPages = atou(f)
		}
	}
	return st, nil
}

// atou parses a decimal number; anything else (a negative number) is 0.
func atou(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	return n
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
func eachProcess(fn func(pid int, st procStat)) error {
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
	_ = eachProcess(func(pid int, st procStat) {
		if st.pgrp == pgid && st.session == sid {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}
