package testwait

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Bound is how long a wait lasts before it fails the test: far beyond
// what any wait takes on a loaded 2-core machine under -race.
const Bound = 2 * time.Minute

// TB is the part of testing.TB a wait uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Exit waits until process pid has exited (a zombie counts as exited).
// same, when not nil, says whether pid still names the process meant (its
// start time, say): false counts as exited, for a pid that was reused.
func Exit(t TB, what string, pid int, same func() bool) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("%s: pidfd_open(%d): %v", what, pid, err)
	}
	defer unix.Close(fd)
	// The pidfd names the process that has pid now; if that is not the
	// one meant, the one meant is gone.
	if same != nil && !same() {
		return
	}
	if !readable(t, what, fd, time.Now().Add(Bound)) {
		t.Fatalf("%s: process %d still runs after %s", what, pid, Bound)
	}
}

// Until waits until cond holds, checking it at the start and whenever a
// file in dir is created, written, closed, renamed, removed or has its
// attributes changed. dir must exist. cond must depend only on files in
// dir (or on something that changes with them).
func Until(t TB, what, dir string, cond func() bool) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("%s: inotify_init: %v", what, err)
	}
	defer unix.Close(fd)
	const mask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO |
		unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_ATTRIB
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		t.Fatalf("%s: watch %s: %v", what, dir, err)
	}
	deadline := time.Now().Add(Bound)
	buf := make([]byte, 64<<10)
	for !cond() {
		if !readable(t, what, fd, deadline) {
			t.Fatalf("%s: not so after %s", what, Bound)
		}
		for { // drain: cond reads the files themselves
			if _, err := unix.Read(fd, buf); err != nil {
				break
			}
		}
	}
}

// FileContains waits until the file at path contains s.
func FileContains(t TB, what, path, s string) {
	t.Helper()
	Until(t, what, filepath.Dir(path), func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), s)
	})
}

// Exists waits until path exists.
func Exists(t TB, what, path string) {
	t.Helper()
	Until(t, what, filepath.Dir(path), func() bool {
		_, err := os.Lstat(path)
		return err == nil
	})
}

// readable waits until fd is readable (true) or deadline passes (false).
func readable(t TB, what string, fd int, deadline time.Time) bool {
	t.Helper()
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: poll: %v", what, err)
		}
		if n > 0 {
			return true
		}
	}
}
