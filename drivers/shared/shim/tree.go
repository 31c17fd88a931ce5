package shim

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The task's processes, for a task that is not isolated, are the shim's
// descendants: the shim is a child subreaper (PR_SET_CHILD_SUBREAPER), so
// a process whose parent exits is re-parented to the shim, not to init,
// also when it left the task's process group or session. Finding them
// takes no scan of /proc: each process lists its children in
// /proc/<pid>/task/<tid>/children (one file per thread).

// becomeSubreaper makes this process the reaper of its orphaned
// descendants.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become the task's subreaper: %w", err)
	}
	return nil
}

// errNoChildrenFiles means the kernel has no /proc/<pid>/task/<tid>/children
// (built without CONFIG_PROC_CHILDREN).
var errNoChildrenFiles = errors.New("no /proc/<pid>/task/<tid>/children files")

// descendants returns the pids of the processes descended from root (root
// itself excluded), exited ones not yet reaped included. A process that
// forks or exits during the walk may be missed.
func descendants(root int) ([]int, error) {
	pids, err := descendantsFromChildren(root)
	if errors.Is(err, errNoChildrenFiles) {
		return descendantsFromScan(root)
	}
	return pids, err
}

// descendantsFromChildren walks the children files from root.
func descendantsFromChildren(root int) ([]int, error) {
	buf := make([]byte, 4096)
	var names []string
	var pids []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		var err error
		names, err = readDirNames(dir, buf, names[:0])
		if err != nil {
			if pid == root {
				return nil, fmt.Errorf("list threads of process %d: %w", pid, err)
			}
			continue // exited meanwhile
		}
		for _, tid := range names {
			b, err := readSmallFile(dir+tid+"/children", buf)
			if err != nil {
				if pid == root && tid == strconv.Itoa(root) && errors.Is(err, syscall.ENOENT) {
					return nil, errNoChildrenFiles
				}
				continue // the thread or process exited meanwhile
			}
			for len(b) > 0 {
				n := 0
				for len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
					n = n*10 + int(b[0]-'0')
					b = b[1:]
				}
				if len(b) > 0 {
					b = b[1:] // the separator
				}
				if n > 0 {
					pids = append(pids, n)
					queue = append(queue, n)
				}
			}
		}
	}
	return pids, nil
}

// descendantsFromScan finds root's descendants from the parent pids of
// every process in /proc, for kernels without children files.
func descendantsFromScan(root int) ([]int, error) {
	children := map[int][]int{}
	err := eachProcess(func(pid int, st procStat) {
		children[st.ppid] = append(children[st.ppid], pid)
	})
	if err != nil {
		return nil, err
	}
	var pids []int
	queue := []int{root}
	for len(queue) > 0 {
		kids := children[queue[0]]
		queue = append(queue[1:], kids...)
		pids = append(pids, kids...)
	}
	return pids, nil
}

// readSmallFile reads the file at path into buf (growing it if it is too
// small) and returns the bytes read. It avoids os.File's bookkeeping: the
// shim reads a few of these per stats request.
func readSmallFile(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return nil, err
		case m == 0:
			return buf[:n], nil
		}
		n += m
	}
}

// readDirNames appends the names in directory dir to names, using buf to
// read the entries.
func readDirNames(dir string, buf []byte, names []string) ([]string, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return names, err
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return names, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

// killPasses bounds the passes of killDescendants: a process forked while
// a pass kills its parent is found by the next one.
const killPasses = 5

// killDescendants SIGKILLs every process descended from this process,
// pass after pass until a pass finds none left to kill. With reap, it
// also reaps this process's exited children between passes: only once
// the task's main process was reaped, or it could take the task's exit.
func killDescendants(reap bool) {
	self := syscall.Getpid()
	for range killPasses {
		if reap {
			reapExited()
		}
		pids, err := descendants(self)
		if err != nil || len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// reapExited reaps the children of this process that have exited, without
// waiting for the others.
func reapExited() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

// reapUntil waits for this process's children and reaps each as it exits
// until pid is among them, and returns pid's wait status. Orphans of the
// task, re-parented to the shim, are reaped on the way.
func reapUntil(pid int) (syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return 0, fmt.Errorf("wait for task process %d: %w", pid, err)
		case got == pid:
			return ws, nil
		}
	}
}
