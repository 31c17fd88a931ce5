package isolation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// devices are the host devices bind-mounted into the task's /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// setupRoot builds the task's root inside the init stage's (new) mount
// namespace: nothing it mounts is seen by the host.
// root is the path of spec.RootDir to use (rootPath).
func setupRoot(spec *Spec, root string) error {
	// Keep our mounts from propagating to the host, and the host's to us.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// The root must be a mount point for pivot_root.
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s onto itself: %w", root, err)
	}
	for _, m := range spec.Mounts {
		if err := bindMount(root, m); err != nil {
			return err
		}
	}
	procDir, err := mountPoint(root, "/proc", true)
	if err != nil {
		return err
	}
	if err := unix.Mount("proc", procDir, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := setupDev(root); err != nil {
		return err
	}
	for _, d := range spec.Devices {
		if err := bindMount(root, d); err != nil {
			return fmt.Errorf("device %s: %w", d.Target, err)
		}
	}
	return nil
}

// bindMount binds m.Source at m.Target inside root; a symlink source is
// recreated as a symlink. A source Start passed as a descriptor (m.FD) or
// a link (m.Link) is taken from there.
func bindMount(root string, m Mount) error {
	if m.Link != "" {
		return copySymlink(root, m)
	}
	if m.FD > 0 {
		// A copy Start made (read-only already): attach it.
		var st unix.Stat_t
		if err := unix.Fstat(m.FD, &st); err != nil {
			return fmt.Errorf("mount %s: %w", m.Source, err)
		}
		target, err := mountPoint(root, m.Target, st.Mode&unix.S_IFMT == unix.S_IFDIR)
		if err != nil {
			return err
		}
		if err := attachMount(m.FD, target); err != nil {
			return fmt.Errorf("mount %s: %w", m.Source, err)
		}
		return nil
	}
	source := m.Source
	fi, err := os.Lstat(source)
	if errors.Is(err, os.ErrNotExist) && m.Optional {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.Source, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return copySymlink(root, m)
	}
	target, err := mountPoint(root, m.Target, fi.IsDir())
	if err != nil {
		return err
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s to %s: %w", m.Source, m.Target, err)
	}
	if !m.ReadOnly {
		return nil
	}
	// A bind mount takes the flags of a remount; keep the source's
	// nosuid, nodev and noexec, and its atime flags (in a user namespace
	// the kernel refuses to change any of them).
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	var st unix.Statfs_t
	if err := unix.Statfs(source, &st); err == nil {
		for _, f := range []struct{ st, ms int64 }{
			{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
			{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if st.Flags&f.st != 0 {
				flags |= uintptr(f.ms)
			}
		}
	}
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", m.Target, err)
	}
	return nil
}

// copySymlink recreates the symlink m.Source (whose target m.Link is, when
// set) at m.Target inside root.
func copySymlink(root string, m Mount) error {
	dest := m.Link
	if dest == "" {
		var err error
		if dest, err = os.Readlink(m.Source); err != nil {
			return fmt.Errorf("mount %s: %w", m.Source, err)
		}
	}
	parent, err := mountPoint(root, filepath.Dir(m.Target), true)
	if err != nil {
		return err
	}
	link := filepath.Join(parent, filepath.Base(m.Target))
	if cur, err := os.Readlink(link); err == nil && cur == dest {
		return nil
	}
	if err := os.Symlink(dest, link); err != nil {
		return fmt.Errorf("link %s -> %s in the task's root: %w", m.Target, dest, err)
	}
	return nil
}

// mountPoint creates target inside root (a directory, or an empty file
// when dir is false) and returns its host path. It refuses a path with a
// symlink in it: the task may have planted one to redirect the mount. The
// path is created beneath root without following any link
// (drivers/shared/beneath); nothing of the task runs while the root is
// set up, so it cannot swap one in before the mount.
func mountPoint(root, target string, dir bool) (string, error) {
	rel := strings.TrimPrefix(filepath.Clean("/"+target), "/")
	if rel == "" {
		return root, nil
	}
	r, err := beneath.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("mount point %s: %w", target, err)
	}
	defer r.Close()
	if dir {
		if err := r.MkdirAll(rel, 0o755); err != nil {
			return "", fmt.Errorf("create mount point %s: %w", target, err)
		}
		return filepath.Join(root, rel), nil
	}
	if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return "", fmt.Errorf("create mount point %s: %w", target, err)
	}
	f, err := r.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, os.ErrExist) {
		// Keep what is there, unless it is a link.
		fi, lerr := r.Lstat(rel)
		if lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			lerr = beneath.ErrSymlink
		}
		err = lerr
	} else if err == nil {
		err = f.Close()
	}
	if err != nil {
		return "", fmt.Errorf("create mount point %s: %w", target, err)
	}
	return filepath.Join(root, rel), nil
}

// setupDev mounts a small tmpfs at /dev with the basic devices bound from
// the host, the usual /proc links and a /dev/shm.
func setupDev(root string) error {
	dev, err := mountPoint(root, "/dev", true)
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=65536k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range devices {
		src := "/dev/" + name
		if _, err := os.Stat(src); err != nil {
			continue // e.g. no /dev/tty in this environment
		}
		if err := bindMount(root, Mount{Source: src, Target: src}); err != nil {
			return err
		}
	}
	for name, dest := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(dest, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("link /dev/%s: %w", name, err)
		}
	}
	shm := filepath.Join(dev, "shm")
	if err := os.Mkdir(shm, 0o1777); err != nil {
		return fmt.Errorf("create /dev/shm: %w", err)
	}
	if err := unix.Mount("shm", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=65536k"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// enterRoot makes spec.RootDir (reached as root, see rootPath) the
// process's "/": pivot_root and detach the old root, or chroot with
// NoPivot.
func enterRoot(spec *Spec, root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	if spec.NoPivot {
		if err := unix.Chroot("."); err != nil {
			return fmt.Errorf("chroot: %w", err)
		}
		return os.Chdir("/")
	}
	// pivot_root(".", ".") stacks the old root on top of the new one; the
	// lazy unmount then leaves only the new root (see pivot_root(2)).
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	return os.Chdir("/")
}
