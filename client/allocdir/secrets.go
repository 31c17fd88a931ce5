package allocdir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// SecretsSizeMB is the size of the tmpfs mounted on each task's secrets
// directory, in MiB: Nomad's default (1 MiB).
const SecretsSizeMB = 1

// secretsMountFlags are the tmpfs's mount flags: nothing in it runs, and
// it holds no device nodes or setuid programs (Nomad sets noexec).
const secretsMountFlags = syscall.MS_NOEXEC | syscall.MS_NOSUID | syscall.MS_NODEV

// tmpfsMagic is a tmpfs's f_type in statfs(2) (linux/magic.h).
const tmpfsMagic = 0x01021994

// mountFunc is mount(2); tests replace it.
type mountFunc func(source, target, fstype string, flags uintptr, data string) error

// mountSecrets mounts a tmpfs on the directory name beneath root (a task's
// secrets directory, which exists), unless one is mounted there already:
// after an agent restart the live tmpfs, with what the task wrote in it,
// is kept. The directory is opened beneath root without following a link
// and the tmpfs mounted on that very directory (through its descriptor),
// so a link planted in its place or on the way is never followed.
//
// An error it returns means the directory could not be opened or
// checked; a failed mount (an agent that is not root) is logged and leaves
// a plain directory, as Nomad's does (silently, where Nomad's agent is not
// root).
func mountSecrets(root *beneath.Root, name string, mount mountFunc, logger *slog.Logger) error {
	dir, err := root.Open(name)
	if err != nil {
		return err
	}
	defer dir.Close()
	mounted, err := isTmpfsMount(root, name, dir)
	if err != nil || mounted {
		return err
	}
	target := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
	opts := fmt.Sprintf("size=%dm,mode=0700", SecretsSizeMB)
	// noswap (Linux 6.4) keeps the secrets out of swap too; older
	// kernels refuse the option.
	err = mount("tmpfs", target, "tmpfs", secretsMountFlags, opts+",noswap")
	if errors.Is(err, syscall.EINVAL) {
		err = mount("tmpfs", target, "tmpfs", secretsMountFlags, opts)
	}
	if err != nil {
		logger.Warn("secrets directory is a plain directory on disk, not a tmpfs: the agent cannot mount one (run it as root to keep secrets off the disk)",
			"path", filepath.Join(root.Name(), name), "error", err)
	}
	return nil
}

// isTmpfsMount reports whether dir (name beneath root, opened) is the root
// of a tmpfs mounted on it: its device differs from its parent's. Another
// file system mounted there is an error, as it is not Drover's.
func isTmpfsMount(root *beneath.Root, name string, dir *os.File) (bool, error) {
	var st, parent syscall.Stat_t
	if err := syscall.Fstat(int(dir.Fd()), &st); err != nil {
		return false, fmt.Errorf("stat %s: %w", name, err)
	}
	pdir := filepath.Dir(name)
	var pf *os.File
	var err error
	if pdir == "." {
		pf, err = os.Open(root.Name())
	} else {
		pf, err = root.Open(pdir)
	}
	if err != nil {
		return false, err
	}
	defer pf.Close()
	if err := syscall.Fstat(int(pf.Fd()), &parent); err != nil {
		return false, fmt.Errorf("stat %s: %w", pdir, err)
	}
	if st.Dev == parent.Dev {
		return false, nil
	}
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(int(dir.Fd()), &fs); err != nil {
		return false, fmt.Errorf("statfs %s: %w", name, err)
	}
	if fs.Type != tmpfsMagic {
		return false, fmt.Errorf("%s: a file system other than a tmpfs (type %#x) is mounted there: unmount it", filepath.Join(root.Name(), name), fs.Type)
	}
	return true, nil
}

// unmountSecrets unmounts the tmpfs of every task's secrets directory in
// the alloc directory alloc, so that its content goes and the directory
// can be removed. Directories are opened without following links; a
// secrets directory without a tmpfs is left alone.
func unmountSecrets(alloc *beneath.Root) error {
	entries, err := alloc.ReadDir(".")
	if err != nil {
		return fmt.Errorf("list task dirs: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || e.Name() == SharedAllocName || Internal(e.Name()) {
			continue
		}
		name := filepath.Join(e.Name(), SecretsDirName)
		if err := unmountTmpfs(alloc, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unmountTmpfs unmounts the tmpfs mounted on name beneath root, if any.
// A tmpfs mounted over another (by an old agent that mounted again) is
// unmounted too.
func unmountTmpfs(root *beneath.Root, name string) error {
	for {
		dir, err := root.Open(name)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, beneath.ErrSymlink) || errors.Is(err, syscall.ENOTDIR) {
			// Nothing of Drover's is mounted there: RemoveAll removes
			// what a task planted.
			return nil
		}
		if err != nil {
			return fmt.Errorf("unmount secrets: %w", err)
		}
		mounted, err := isTmpfsMount(root, name, dir)
		if err == nil && mounted {
			// The descriptor is the tmpfs's root: unmount exactly it.
			// MNT_DETACH: a task's leftover process may still hold a
			// file open there.
			target := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
			if uerr := syscall.Unmount(target, syscall.MNT_DETACH); uerr != nil {
				err = fmt.Errorf("unmount secrets %s: %w", filepath.Join(root.Name(), name), uerr)
			}
		}
		dir.Close()
		if err != nil || !mounted {
			return err
		}
	}
}
