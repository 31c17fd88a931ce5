package allocwatcher

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/beneath"
)

// maxSnapshotEntries bounds the number of entries an unpacked snapshot
// may hold, whatever their size.
const maxSnapshotEntries = 1 << 20

// ErrUnsafeSnapshot is wrapped by Unpack's errors for a snapshot that
// tries to write outside the directories it may write, holds links that
// point out of the alloc dir, or is too large.
var ErrUnsafeSnapshot = errors.New("unsafe snapshot")

// WriteSnapshot writes a tar.gz of dir's migratable data to w: alloc/data
// and each named task's local/ directory, with paths relative to the alloc
// directory. Regular files, directories and symlinks are included; other
// file types are skipped. The tree is read beneath the alloc dir without
// following any link (a link is archived as a link, whose target Unpack
// checks), so a link a task swaps in cannot make the archive carry a host
// file. A root that is not a directory (a task replaced it by a link) is
// left out.
func WriteSnapshot(w io.Writer, dir *allocdir.AllocDir, tasks []string) error {
	r, err := beneath.OpenRoot(dir.AllocDir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer r.Close()
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	roots := []string{path.Join(allocdir.SharedAllocName, allocdir.DataDirName)}
	for _, t := range tasks {
		roots = append(roots, path.Join(t, allocdir.LocalDirName))
	}
	for _, root := range roots {
		fi, err := r.Lstat(root)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, beneath.ErrSymlink) || (err == nil && !fi.IsDir()) {
			continue
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", root, err)
		}
		if err := addTree(tw, r, root, fi); err != nil {
			return fmt.Errorf("snapshot %s: %w", root, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// addTree adds name (described by fi) and, for a directory, everything
// below it.
func addTree(tw *tar.Writer, r *beneath.Root, name string, fi fs.FileInfo) error {
	var link string
	switch {
	case fi.IsDir(), fi.Mode().IsRegular():
	case fi.Mode()&fs.ModeSymlink != 0:
		var err error
		if link, err = r.Readlink(name); err != nil {
			return err
		}
	default:
		return nil
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	hdr.Name = name
	if fi.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname = "", ""
	if fi.Mode().IsRegular() {
		f, err := r.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if ofi, err := f.Stat(); err != nil || !ofi.Mode().IsRegular() {
			return fmt.Errorf("%s changed while it was archived", name)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		// Copy exactly the header's size: a file growing meanwhile must not
		// corrupt the archive.
		if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	entries, err := r.ReadDir(name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := addTree(tw, r, name+"/"+e.Name(), e); err != nil {
			return err
		}
	}
	return nil
}

// UnpackLimits bounds what Unpack accepts.
type UnpackLimits struct {
	// MaxBytes bounds the total size of the files unpacked.
	MaxBytes int64
	// Tasks are the task names whose local/ directories may be written.
	Tasks []string
}

// Unpack extracts a snapshot written by WriteSnapshot into the alloc
// directory root. It accepts only directories, regular files and symlinks,
// only under alloc/data and <task>/local for the tasks in limits; it
// rejects absolute or escaping paths, symlinks that are absolute or point
// out of root, writes through symlinks, and archives over the size limits.
// A rejected snapshot returns an error wrapping ErrUnsafeSnapshot; what
// was extracted before stays.
func Unpack(r io.Reader, root string, limits UnpackLimits) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("unpack snapshot: %w", err)
	}
	defer gz.Close()
	allowed := []string{path.Join(allocdir.SharedAllocName, allocdir.DataDirName)}
	for _, t := range limits.Tasks {
		allowed = append(allowed, path.Join(t, allocdir.LocalDirName))
	}
	rt, err := beneath.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("unpack snapshot: %w", err)
	}
	defer rt.Close()
	u := &unpacker{root: rt, allowed: allowed, left: limits.MaxBytes, links: map[string]bool{}}
	tr := tar.NewReader(gz)
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack snapshot: %w", err)
		}
		if n >= maxSnapshotEntries {
			return fmt.Errorf("%w: more than %d entries", ErrUnsafeSnapshot, maxSnapshotEntries)
		}
		if err := u.entry(hdr, tr); err != nil {
			return fmt.Errorf("unpack snapshot entry %q: %w", hdr.Name, err)
		}
	}
}

type unpacker struct {
	// root is the alloc dir: everything is written beneath it without
	// following a link, whatever the archive or the directory holds.
	root    *beneath.Root
	allowed []string
	left    int64
	// links are the symlinks created so far (cleaned relative paths):
	// nothing may be written below one.
	links map[string]bool
}

func unsafe(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsafeSnapshot}, args...)...)
}

// check validates a name and returns it cleaned and relative.
func (u *unpacker) check(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return "", unsafe("bad path")
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." {
			return "", unsafe("path escapes the alloc dir")
		}
	}
	clean := path.Clean(name)
	ok := false
	for _, a := range u.allowed {
		if clean == a || strings.HasPrefix(clean, a+"/") {
			ok = true
			break
		}
	}
	if !ok {
		return "", unsafe("path is outside alloc/data and the tasks' local directories")
	}
	for p := path.Dir(clean); p != "." && p != "/"; p = path.Dir(p) {
		if u.links[p] {
			return "", unsafe("path goes through the symlink %q", p)
		}
	}
	return clean, nil
}

func (u *unpacker) entry(hdr *tar.Header, r io.Reader) error {
	clean, err := u.check(hdr.Name)
	if err != nil {
		return err
	}
	err = u.write(hdr, clean, r)
	if errors.Is(err, beneath.ErrSymlink) {
		return unsafe("would write through an existing symlink")
	}
	return err
}

func (u *unpacker) write(hdr *tar.Header, clean string, r io.Reader) error {
	perm := fs.FileMode(hdr.Mode) & fs.ModePerm
	if fi, err := u.root.Lstat(clean); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return unsafe("would write through an existing symlink")
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := u.root.MkdirAll(clean, 0o755); err != nil {
			return err
		}
		return u.root.Chmod(clean, perm|0o700)
	case tar.TypeReg:
		if hdr.Size < 0 || hdr.Size > u.left {
			return unsafe("snapshot is larger than the limit")
		}
		u.left -= hdr.Size
		if err := u.root.MkdirAll(path.Dir(clean), 0o755); err != nil {
			return err
		}
		f, err := u.root.OpenFile(clean, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NONBLOCK, perm)
		if err != nil {
			return err
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return unsafe("would write into something that is not a regular file")
		}
		if _, err := io.CopyN(f, r, hdr.Size); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case tar.TypeSymlink:
		link := hdr.Linkname
		if link == "" || path.IsAbs(link) || strings.HasPrefix(link, "/") {
			return unsafe("absolute symlink %q", link)
		}
		resolved := path.Join(path.Dir(clean), link)
		if resolved == ".." || strings.HasPrefix(resolved, "../") {
			return unsafe("symlink %q points out of the alloc dir", link)
		}
		if err := u.root.MkdirAll(path.Dir(clean), 0o755); err != nil {
			return err
		}
		if err := u.root.Symlink(link, clean); err != nil {
			return err
		}
		u.links[clean] = true
		return nil
	}
	return unsafe("unsupported entry type %q", string(hdr.Typeflag))
}
