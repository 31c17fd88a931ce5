package beneath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// Mkdir creates the directory name beneath r with exactly perm (setting
// it after creation, so that the umask does not filter it and the sticky,
// setuid and setgid bits are kept).
func (r *Root) Mkdir(name string, perm os.FileMode) error {
	parts, err := split(name)
	if err != nil {
		return r.pathErr("mkdir", name, err)
	}
	dir, base, err := r.parent(parts)
	if err != nil {
		return r.pathErr("mkdir", name, err)
	}
	defer unix.Close(dir)
	if err := unix.Mkdirat(dir, base, 0o700); err != nil {
		return r.pathErr("mkdir", name, mapErrno(err))
	}
	fd, err := chmodNewDir(dir, base, perm)
	if err != nil {
		return r.pathErr("mkdir", name, err)
	}
	unix.Close(fd)
	return nil
}

// MkdirAll creates name and the directories above it beneath r that are
// missing, each with exactly perm (as Mkdir); directories that exist are
// left as they are. It fails with ErrSymlink where a component is a link.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	parts, err := split(name)
	if err != nil {
		return r.pathErr("mkdir", name, err)
	}
	dir := r.fd
	defer func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}()
	for _, p := range parts {
		fd, err := openDirAt(dir, p)
		if errors.Is(err, unix.ENOENT) {
			err = unix.Mkdirat(dir, p, 0o700)
			switch {
			case err == nil:
				fd, err = chmodNewDir(dir, p, perm)
			case err == unix.EEXIST:
				// Created concurrently: use it as it is.
				fd, err = openDirAt(dir, p)
			}
		}
		if err != nil {
			return r.pathErr("mkdir", name, mapErrno(err))
		}
		if dir != r.fd {
			unix.Close(dir)
		}
		dir = fd
	}
	return nil
}

// chmodNewDir opens the directory name just created in dir and gives it
// perm; it returns the open directory.
func chmodNewDir(dir int, name string, perm os.FileMode) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, mapErrno(err)
	}
	if err := unix.Fchmod(fd, unixMode(perm)); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Chmod sets the mode of the regular file or directory name beneath r.
// Anything else (a link, a FIFO, a device) is refused: ErrSymlink or
// ErrNotRegular.
func (r *Root) Chmod(name string, mode os.FileMode) error {
	fd, kind, err := r.openPath("chmod", name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if kind == unix.S_IFDIR {
		// A directory's O_PATH descriptor can be reopened for real.
		dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return r.pathErr("chmod", name, err)
		}
		defer unix.Close(dfd)
		if err := unix.Fchmod(dfd, unixMode(mode)); err != nil {
			return r.pathErr("chmod", name, err)
		}
		return nil
	}
	// fchmod does not take an O_PATH descriptor; the descriptor's
	// /proc/self/fd entry names exactly the file it holds.
	if err := unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unixMode(mode), 0); err != nil {
		return r.pathErr("chmod", name, err)
	}
	return nil
}

// Chown sets the owner and group of the regular file or directory name
// beneath r (-1 leaves one unchanged). Anything else is refused, as by
// Chmod.
func (r *Root) Chown(name string, uid, gid int) error {
	fd, _, err := r.openPath("chown", name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH); err != nil {
		return r.pathErr("chown", name, err)
	}
	return nil
}

// openPath opens name with O_PATH and returns it with its file type,
// refusing anything but a regular file or a directory.
func (r *Root) openPath(op, name string) (int, uint32, error) {
	parts, err := split(name)
	if err != nil {
		return -1, 0, r.pathErr(op, name, err)
	}
	fd, err := r.resolve(parts, unix.O_PATH, 0)
	if err != nil {
		return -1, 0, r.pathErr(op, name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, r.pathErr(op, name, err)
	}
	switch kind := st.Mode & unix.S_IFMT; kind {
	case unix.S_IFREG, unix.S_IFDIR:
		return fd, kind, nil
	case unix.S_IFLNK:
		unix.Close(fd)
		return -1, 0, r.pathErr(op, name, ErrSymlink)
	}
	unix.Close(fd)
	return -1, 0, r.pathErr(op, name, ErrNotRegular)
}

// Lstat describes name beneath r; a link is described, not followed.
// FileInfo.Sys returns a *unix.Stat_t.
func (r *Root) Lstat(name string) (fs.FileInfo, error) {
	parts, err := split(name)
	if err != nil {
		return nil, r.pathErr("lstat", name, err)
	}
	var st unix.Stat_t
	if len(parts) == 0 {
		if err := unix.Fstat(r.fd, &st); err != nil {
			return nil, r.pathErr("lstat", name, err)
		}
		return newFileInfo(filepath.Base(r.name), &st), nil
	}
	dir, base, err := r.parent(parts)
	if err != nil {
		return nil, r.pathErr("lstat", name, err)
	}
	defer unix.Close(dir)
	if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, r.pathErr("lstat", name, err)
	}
	return newFileInfo(base, &st), nil
}

// ReadDir describes the entries of the directory name beneath r, sorted
// by name. Links are described, not followed; an entry removed while the
// directory is read is left out.
func (r *Root) ReadDir(name string) ([]fs.FileInfo, error) {
	d, err := r.OpenFile(name, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, r.pathErr("readdir", name, err)
	}
	slices.Sort(names)
	fd := int(d.Fd())
	out := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return nil, r.pathErr("lstat", name+"/"+n, err)
		}
		out = append(out, newFileInfo(n, &st))
	}
	return out, nil
}

// Readlink returns the target of the link name beneath r (without
// following it, or any other link).
func (r *Root) Readlink(name string) (string, error) {
	parts, err := split(name)
	if err != nil {
		return "", r.pathErr("readlink", name, err)
	}
	dir, base, err := r.parent(parts)
	if err != nil {
		return "", r.pathErr("readlink", name, err)
	}
	defer unix.Close(dir)
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, base, buf)
		if err != nil {
			return "", r.pathErr("readlink", name, err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// Symlink creates the link name beneath r, pointing to target. The target
// is not checked: links beneath a root are never followed by this package.
func (r *Root) Symlink(target, name string) error {
	parts, err := split(name)
	if err != nil {
		return r.pathErr("symlink", name, err)
	}
	dir, base, err := r.parent(parts)
	if err != nil {
		return r.pathErr("symlink", name, err)
	}
	defer unix.Close(dir)
	if err := unix.Symlinkat(target, dir, base); err != nil {
		return r.pathErr("symlink", name, err)
	}
	return nil
}

// Rename renames oldname to newname, both beneath r, as rename(2): a link
// is renamed, not followed; an empty directory or a file at newname is
// replaced.
func (r *Root) Rename(oldname, newname string) error {
	oldParts, err := split(oldname)
	if err != nil {
		return r.pathErr("rename", oldname, err)
	}
	newParts, err := split(newname)
	if err != nil {
		return r.pathErr("rename", newname, err)
	}
	oldDir, oldBase, err := r.parent(oldParts)
	if err != nil {
		return r.pathErr("rename", oldname, err)
	}
	defer unix.Close(oldDir)
	newDir, newBase, err := r.parent(newParts)
	if err != nil {
		return r.pathErr("rename", newname, err)
	}
	defer unix.Close(newDir)
	if err := unix.Renameat(oldDir, oldBase, newDir, newBase); err != nil {
		return &os.LinkError{Op: "rename", Old: r.join(oldParts), New: r.join(newParts), Err: err}
	}
	return nil
}

// Remove removes the file, link or empty directory name beneath r.
func (r *Root) Remove(name string) error {
	parts, err := split(name)
	if err != nil {
		return r.pathErr("remove", name, err)
	}
	dir, base, err := r.parent(parts)
	if err != nil {
		return r.pathErr("remove", name, err)
	}
	defer unix.Close(dir)
	if err := unlinkAt(dir, base); err != nil {
		return r.pathErr("remove", name, err)
	}
	return nil
}

// unlinkAt removes name from dir, whatever it is but a non-empty
// directory.
func unlinkAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if derr := unix.Unlinkat(dir, name, unix.AT_REMOVEDIR); derr != unix.ENOTDIR {
			return derr
		}
	}
	return err
}

// removeBatch is how many entries RemoveAll reads from a directory before
// removing them and reading again.
const removeBatch = 1024

// RemoveAll removes name beneath r and everything below it. A link is
// removed, never followed; a directory with a file system mounted on it is
// left alone with everything below it, and the error wraps ErrMountPoint.
// A name that does not exist is no error. name must not be the root.
func (r *Root) RemoveAll(name string) error {
	parts, err := split(name)
	if err != nil {
		return r.pathErr("remove", name, err)
	}
	dir, base, err := r.parent(parts)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return r.pathErr("remove", name, err)
	}
	defer unix.Close(dir)
	if err := r.removeAllAt(dir, base); err != nil {
		return r.pathErr("remove", name, err)
	}
	return nil
}

// removeAllAt removes name from dir with everything below it.
func (r *Root) removeAllAt(dir int, name string) error {
	err := unlinkAt(dir, name)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err == unix.EBUSY {
		// rmdir(2) tells a mount point before looking inside it.
		return fmt.Errorf("%w (%w)", ErrMountPoint, err)
	}
	if err != unix.ENOTEMPTY && err != unix.EEXIST {
		return err
	}
	for {
		fd, err := r.openChildDir(dir, name)
		if err == unix.ENOENT {
			return nil
		}
		if err != nil {
			return err
		}
		d := os.NewFile(uintptr(fd), name)
		names, rerr := d.Readdirnames(removeBatch)
		var errs []error
		for _, n := range names {
			if err := r.removeAllAt(fd, n); err != nil {
				errs = append(errs, &fs.PathError{Op: "remove", Path: name + "/" + n, Err: err})
			}
		}
		d.Close()
		if rerr != nil && rerr != io.EOF {
			return errors.Join(append(errs, rerr)...)
		}
		if len(errs) > 0 && len(errs) == len(names) {
			// Nothing of this batch could be removed: reading again
			// would find the same entries.
			return errors.Join(errs...)
		}
		if len(names) < removeBatch {
			if err := errors.Join(errs...); err != nil {
				return err
			}
			break
		}
	}
	err = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
	if err == unix.ENOENT {
		return nil
	}
	return err
}

// openChildDir opens the directory name in dir for reading, refusing a
// link and a mount point.
func (r *Root) openChildDir(dir int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if !r.walk.Load() {
		how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags | unix.RESOLVE_NO_XDEV}
		for range maxRetries {
			fd, err := unix.Openat2(dir, name, &how)
			switch err {
			case unix.EINTR, unix.EAGAIN:
				continue
			case unix.EXDEV:
				return -1, ErrMountPoint
			case nil:
				return fd, nil
			}
			if err != unix.ENOSYS {
				return -1, mapErrno(err)
			}
			r.walk.Store(true)
			break
		}
	}
	// Without openat2, a mount point is told by its device number: a
	// bind mount from the same file system is not seen.
	var parent, child unix.Stat_t
	if err := unix.Fstat(dir, &parent); err != nil {
		return -1, err
	}
	fd, err := unix.Openat(dir, name, flags, 0)
	if err != nil {
		return -1, mapErrno(err)
	}
	if err := unix.Fstat(fd, &child); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if child.Dev != parent.Dev {
		unix.Close(fd)
		return -1, ErrMountPoint
	}
	return fd, nil
}
