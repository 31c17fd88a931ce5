package allocdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// Errors of a Viewer. A missing path, and one that names Drover's own
// files (Internal), give an error wrapping fs.ErrNotExist.
var (
	// ErrOutside: the path leaves the allocation directory, by ".." or
	// through a link.
	ErrOutside = errors.New("outside the allocation directory")
	// ErrBadPath: the path holds a NUL byte or goes through too many links.
	ErrBadPath = errors.New("bad path")
	// ErrNotDir: a directory was needed.
	ErrNotDir = errors.New("not a directory")
	// ErrIsDir: a file was needed.
	ErrIsDir = errors.New("is a directory")
	// ErrNotRegular: the path is a FIFO, a socket or a device.
	ErrNotRegular = errors.New("not a regular file")
)

// maxLinkHops bounds how many links a path may go through.
const maxLinkHops = 16

// Viewer shows an allocation directory to its users: the alloc fs API
// (ls, stat, cat, readat) reads through one.
//
// A user's path is relative to the alloc directory ("/" and "" are the
// directory itself); ".." may be used as long as it stays inside. Links
// are followed as long as they stay inside the alloc directory: an
// absolute link, or one that climbs out, is ErrOutside. The path is
// resolved to one without links first, and that one is then opened
// without following any link, so a link a task swaps in meanwhile makes
// the read fail, never escape. Drover's own entries (Internal names at the
// top of the alloc dir and in a task's directory) are hidden: not listed,
// and not found, even through a link.
type Viewer struct {
	root *beneath.Root
}

// OpenViewer opens the alloc directory allocDir for reading.
func OpenViewer(allocDir string) (*Viewer, error) {
	r, err := beneath.OpenRoot(allocDir)
	if err != nil {
		return nil, fmt.Errorf("open allocation directory: %w", err)
	}
	return &Viewer{root: r}, nil
}

// Close releases the directory.
func (v *Viewer) Close() error { return v.root.Close() }

// Stat describes the file or directory at the user's path p, following
// links inside the alloc directory.
func (v *Viewer) Stat(p string) (fs.FileInfo, error) {
	name, err := v.resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := v.root.Lstat(name)
	if err != nil {
		return nil, v.mapErr(p, err)
	}
	return fi, nil
}

// List describes the entries of the directory at the user's path p,
// sorted by name. Entries are described as they are (a link as a link);
// at the top of the alloc directory, Drover's own are left out. It also
// returns p resolved (for naming the entries to ContentType and Open).
func (v *Viewer) List(p string) ([]fs.FileInfo, string, error) {
	name, err := v.resolve(p)
	if err != nil {
		return nil, "", err
	}
	fi, err := v.root.Lstat(name)
	if err != nil {
		return nil, "", v.mapErr(p, err)
	}
	if !fi.IsDir() {
		return nil, "", fmt.Errorf("path %q: %w", p, ErrNotDir)
	}
	entries, err := v.root.ReadDir(name)
	if err != nil {
		return nil, "", v.mapErr(p, err)
	}
	if internalParent(name) {
		entries = withoutInternal(entries)
	}
	return entries, name, nil
}

// internalParent reports whether the directory name (resolved, beneath the
// alloc dir) is one where Drover keeps its own entries next to the
// tasks': the alloc dir itself and each task's directory (whose own files,
// such as the docker driver's log position, tasks never write). The
// shared alloc/ is the tasks'.
func internalParent(name string) bool {
	return name == "" || (!strings.Contains(name, "/") && name != SharedAllocName)
}

// hidden reports whether the resolved path parts go through one of
// Drover's own entries.
func hidden(parts []string) bool {
	for i := 0; i < len(parts) && i < 2; i++ {
		if Internal(parts[i]) && internalParent(strings.Join(parts[:i], "/")) {
			return true
		}
	}
	return false
}

func withoutInternal(entries []fs.FileInfo) []fs.FileInfo {
	out := entries[:0]
	for _, e := range entries {
		if !Internal(e.Name()) {
			out = append(out, e)
		}
	}
	return out
}

// Open opens the regular file at the user's path p for reading, following
// links inside the alloc directory, and describes it. A directory is
// ErrIsDir; a FIFO, socket or device ErrNotRegular (opening one never
// blocks).
func (v *Viewer) Open(p string) (*os.File, fs.FileInfo, error) {
	name, err := v.resolve(p)
	if err != nil {
		return nil, nil, err
	}
	f, err := v.root.Open(name)
	if err != nil {
		return nil, nil, v.mapErr(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %q: %w", p, err)
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, nil, fmt.Errorf("path %q: %w", p, ErrIsDir)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, fmt.Errorf("path %q is a %s: %w", p, kind(fi.Mode()), ErrNotRegular)
	}
	return f, fi, nil
}

// resolve turns the user's path p into a name beneath the alloc directory
// that holds no link ("" for the directory itself).
func (v *Viewer) resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte: %w", p, ErrBadPath)
	}
	rel := path.Clean(strings.TrimLeft(strings.ReplaceAll(p, `\`, "/"), "/"))
	if escapes(rel) {
		return "", fmt.Errorf("path %q is %w", p, ErrOutside)
	}
	parts := splitClean(rel)
	hops := 0
	for i := 0; i < len(parts); i++ {
		if hidden(parts[:i+1]) {
			return "", v.notExist(p)
		}
		cur := strings.Join(parts[:i+1], "/")
		fi, err := v.root.Lstat(cur)
		if err != nil {
			return "", v.mapErr(p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("path %q goes through more than %d symlinks: %w", p, maxLinkHops, ErrBadPath)
		}
		target, err := v.root.Readlink(cur)
		if err != nil {
			return "", v.mapErr(p, err)
		}
		next := path.Join(path.Dir(cur), target)
		if path.IsAbs(target) || escapes(next) {
			return "", fmt.Errorf("path %q is a symlink that points %w", p, ErrOutside)
		}
		parts = append(splitClean(next), parts[i+1:]...)
		i = -1
	}
	return strings.Join(parts, "/"), nil
}

// escapes reports whether the cleaned relative path rel climbs out.
func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, "../")
}

// splitClean splits a cleaned relative path; "." has no components.
func splitClean(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

func (v *Viewer) notExist(p string) error {
	return fmt.Errorf("no such file or directory in the allocation: %q: %w", p, fs.ErrNotExist)
}

// mapErr words an error of the root for the user's path p.
func (v *Viewer) mapErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return v.notExist(p)
	case errors.Is(err, beneath.ErrSymlink):
		// resolve left no link: one was swapped in since.
		return fmt.Errorf("path %q changed while it was read (a symlink appeared): %w", p, ErrOutside)
	case errors.Is(err, beneath.ErrBadName):
		return fmt.Errorf("path %q is %w", p, ErrOutside)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("path %q: %w", p, err)
	}
	return fmt.Errorf("read %q: %w", p, err)
}

// kind names a file type for messages.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}
