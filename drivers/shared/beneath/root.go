package beneath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ErrSymlink is wrapped by the error of an operation whose name meets a
// symbolic link: links are never followed beneath a root.
var ErrSymlink = errors.New("a symbolic link is in the way (links are never followed beneath a root)")

// ErrBadName is wrapped by the error of an operation given a name that is
// not a relative path of plain components (it is absolute, has a ".."
// component or a NUL byte), or that names the root where a file below it
// is needed.
var ErrBadName = errors.New(`not a relative path of plain names (no leading "/", no "..", no NUL)`)

// ErrMountPoint is wrapped by RemoveAll's error when a directory to remove
// has a file system mounted on it: nothing beneath it is touched.
var ErrMountPoint = errors.New("a file system is mounted there: unmount it first")

// ErrNotRegular is wrapped by the error of an operation that works only on
// regular files and directories (Chmod, Chown) given something else.
var ErrNotRegular = errors.New("not a regular file or directory")

// resolveFlags are openat2's resolution flags: stay beneath the directory
// descriptor and follow no link of any kind.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// maxRetries bounds the retries of an openat2 call that fails with EAGAIN
// or EINTR.
const maxRetries = 16

// Root is an open directory beneath which names are resolved without
// following symbolic links. It is safe for concurrent use; it must not be
// used after Close.
type Root struct {
	f    *os.File
	fd   int
	name string
	// walk is set once openat2 is known to be missing: names are then
	// resolved one component at a time. Tests set it to cover that path.
	walk atomic.Bool
}

// OpenRoot opens the directory dir as a Root. dir itself is trusted:
// symbolic links in it are followed.
func OpenRoot(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open root", Path: dir, Err: err}
	}
	return newRoot(fd, dir), nil
}

func newRoot(fd int, name string) *Root {
	return &Root{f: os.NewFile(uintptr(fd), name), fd: fd, name: name}
}

// Name returns the root's path, as given to OpenRoot (or joined from its
// parent's by Root.OpenRoot).
func (r *Root) Name() string { return r.name }

// Close closes the root's descriptor.
func (r *Root) Close() error { return r.f.Close() }

// OpenRoot opens the directory name beneath r as a Root of its own. The
// new root inherits nothing from r but its place: closing either leaves
// the other usable.
func (r *Root) OpenRoot(name string) (*Root, error) {
	parts, err := split(name)
	if err != nil {
		return nil, r.pathErr("open root", name, err)
	}
	fd, err := r.resolve(parts, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, r.pathErr("open root", name, err)
	}
	sub := newRoot(fd, r.join(parts))
	sub.walk.Store(r.walk.Load())
	return sub, nil
}

// Open opens name beneath r for reading. A FIFO is opened without
// blocking; check what was opened (File.Stat) before reading from it.
func (r *Root) Open(name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
}

// OpenFile opens name beneath r as os.OpenFile does: flag is os.O_RDONLY,
// os.O_WRONLY or os.O_RDWR with os.O_CREATE, os.O_EXCL, os.O_APPEND,
// os.O_TRUNC... and perm (for a file it creates) is filtered by the
// umask. It fails with ErrSymlink when name, or a directory on its way,
// is a symbolic link, even one that would stay beneath r.
func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	parts, err := split(name)
	if err != nil {
		return nil, r.pathErr("open", name, err)
	}
	var mode uint32
	if flag&os.O_CREATE != 0 {
		mode = unixMode(perm)
	}
	fd, err := r.resolve(parts, flag, mode)
	if err != nil {
		return nil, r.pathErr("open", name, err)
	}
	return os.NewFile(uintptr(fd), r.join(parts)), nil
}

// resolve opens parts beneath r with flags (O_NOFOLLOW and O_CLOEXEC
// implied) and returns the descriptor: by one openat2 call, or by a walk
// where openat2 is missing.
func (r *Root) resolve(parts []string, flags int, mode uint32) (int, error) {
	fd, err := r.resolveOnce(parts, flags, mode)
	if err == unix.ENOTDIR && r.hasLink(parts) {
		// O_DIRECTORY or a later component met a link: say so.
		err = ErrSymlink
	}
	return fd, err
}

// hasLink reports whether a component of parts is a symbolic link. It
// only explains an error: it resolves parts again.
func (r *Root) hasLink(parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	dir := r.fd
	defer func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}()
	for _, p := range parts[:len(parts)-1] {
		fd, err := openDirAt(dir, p)
		if err != nil {
			return err == ErrSymlink
		}
		if dir != r.fd {
			unix.Close(dir)
		}
		dir = fd
	}
	var st unix.Stat_t
	return unix.Fstatat(dir, parts[len(parts)-1], &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func (r *Root) resolveOnce(parts []string, flags int, mode uint32) (int, error) {
	if !r.walk.Load() {
		how := unix.OpenHow{
			Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
			Mode:    uint64(mode),
			Resolve: resolveFlags,
		}
		p := strings.Join(parts, "/")
		if p == "" {
			p = "."
		}
		for range maxRetries {
			fd, err := unix.Openat2(r.fd, p, &how)
			switch err {
			case unix.EINTR, unix.EAGAIN:
				continue
			case unix.ENOSYS:
				r.walk.Store(true)
				return r.walkOpen(parts, flags, mode)
			case nil:
				return fd, nil
			}
			return -1, mapErrno(err)
		}
		return -1, unix.EAGAIN
	}
	return r.walkOpen(parts, flags, mode)
}

// walkOpen opens parts one component at a time: each directory on the way
// with O_PATH|O_DIRECTORY|O_NOFOLLOW from the previous one's descriptor,
// the last with flags|O_NOFOLLOW.
func (r *Root) walkOpen(parts []string, flags int, mode uint32) (int, error) {
	dir := r.fd
	defer func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}()
	last := "."
	if len(parts) > 0 {
		for _, p := range parts[:len(parts)-1] {
			fd, err := openDirAt(dir, p)
			if err != nil {
				return -1, err
			}
			if dir != r.fd {
				unix.Close(dir)
			}
			dir = fd
		}
		last = parts[len(parts)-1]
	}
	for {
		fd, err := unix.Openat(dir, last, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, mapErrno(err)
		}
		return fd, nil
	}
}

// openDirAt opens the directory name in dir for use as a directory
// descriptor (O_PATH), refusing a symbolic link with ELOOP.
func openDirAt(dir int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		case unix.ENOTDIR:
			// O_PATH|O_NOFOLLOW opens a link itself, which is then not a
			// directory: tell a link from a file.
			var st unix.Stat_t
			if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return -1, ErrSymlink
			}
		}
		return -1, mapErrno(err)
	}
}

// parent opens the directory that holds the last component of parts and
// returns it (to be closed by the caller) with that component.
func (r *Root) parent(parts []string) (int, string, error) {
	if len(parts) == 0 {
		return -1, "", ErrBadName
	}
	fd, err := r.resolve(parts[:len(parts)-1], unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", err
	}
	return fd, parts[len(parts)-1], nil
}

// mapErrno turns ELOOP, which a resolution that follows no link returns
// for every link it meets, into ErrSymlink.
func mapErrno(err error) error {
	if err == unix.ELOOP {
		return ErrSymlink
	}
	return err
}

// split checks name and returns its components.
func split(name string) ([]string, error) {
	if strings.HasPrefix(name, "/") || strings.IndexByte(name, 0) >= 0 {
		return nil, ErrBadName
	}
	var parts []string
	for _, p := range strings.Split(name, "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			return nil, ErrBadName
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// join returns the path of parts beneath r, for messages and file names.
func (r *Root) join(parts []string) string {
	return path.Join(append([]string{r.name}, parts...)...)
}

func (r *Root) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: fmt.Sprintf("%s beneath %s", name, r.name), Err: err}
}

// unixMode converts perm and the setuid, setgid and sticky bits of an
// os.FileMode to the bits of chmod(2).
func unixMode(m os.FileMode) uint32 {
	out := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		out |= unix.S_ISUID
	}
	if m&os.ModeSetgid != 0 {
		out |= unix.S_ISGID
	}
	if m&os.ModeSticky != 0 {
		out |= unix.S_ISVTX
	}
	return out
}
