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
// some would land on the main thread), and checks that the process's main
// thread is not left in one of those namespaces. (The other threads that
// ran f exit once their goroutine ends, a little after Throwaway returns:
// one still exiting may be seen in its namespace, and runs no Go code.)
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
	main := filepath.Join("/proc/self/task", strconv.Itoa(os.Getpid()), "ns", "uts")
	if ns, err := os.Readlink(main); err != nil || ns != own {
		t.Errorf("the main thread is in UTS namespace %s (%v), want %s", ns, err, own)
	}
	if h, _ := os.Hostname(); h == "throwaway" {
		t.Errorf("the process's hostname is the throwaway thread's")
	}
}
