package allocnet

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/osthread"
)

// createNetns makes a new network namespace and bind-mounts it on path,
// which must not exist. The namespace is made on a locked thread that is
// never given back to the Go scheduler (it exits with its goroutine), so
// no goroutine of the agent runs in it.
func createNetns(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("create netns file: %w", err)
	}
	f.Close()
	osthread.Throwaway(func() {
		if err = unix.Unshare(unix.CLONE_NEWNET); err != nil {
			err = fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err = unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			err = fmt.Errorf("bind-mount network namespace on %s: %w", path, err)
		}
	})
	if err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// isNetns reports whether path is a mounted network namespace.
func isNetns(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// removeNetns unmounts and removes path; a path already gone is fine.
func removeNetns(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	return nil
}

// bindNetns bind-mounts the network namespace file src (another's:
// /proc/<pid>/ns/net) on path, which must not exist; the mount keeps the
// namespace alive whatever becomes of its maker.
func bindNetns(src, path string) error {
	if !isNetns(src) {
		return fmt.Errorf("%s is not a network namespace", src)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("create netns file: %w", err)
	}
	f.Close()
	if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(path)
		return fmt.Errorf("bind-mount network namespace %s on %s: %w", src, path, err)
	}
	return nil
}

// sameFile reports whether a and b are the same file (one namespace).
func sameFile(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
