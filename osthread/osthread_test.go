package osthread

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestThrowawayLeavesNoThreadChanged changes the UTS namespace of the
// thread Throwaway gives, many times and from many goroutines (so that
// some land on the main thread), and checks that no thread of the
// process is left in one of those namespaces.
func TestThrowawayLeavesNoThreadChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unsharing a UTS namespace needs root")
	}
	own, err := os.Readlink("/proc/self/ns/uts")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 400)
	for range 400 {
		go func() {
			var err error
			Throwaway(func() {
				if err = unix.Unshare(unix.CLONE_NEWUTS); err == nil {
					err = unix.Sethostname([]byte("throwaway"))
				}
			})
			errs <- err
		}()
	}
	for range 400 {
		if err := <-errs; err != nil {
			t.Fatalf("in the throwaway thread: %v", err)
		}
	}
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		ns, err := os.Readlink(filepath.Join(task, "ns", "uts"))
		if err != nil {
			continue // the thread exited meanwhile
		}
		if ns != own {
			main := filepath.Base(task) == strconv.Itoa(os.Getpid())
			t.Errorf("thread %s (main thread: %v) is left in UTS namespace %s, want %s", filepath.Base(task), main, ns, own)
		}
	}
	if h, _ := os.Hostname(); h == "throwaway" {
		t.Errorf("the process's hostname is the throwaway thread's")
	}
}
