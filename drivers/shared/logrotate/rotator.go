package logrotate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// FileRotator is an io.WriteCloser that writes to "<dir>/<base>.<n>",
// moving to n+1 when the size limit would be exceeded and deleting the
// oldest files beyond the file limit. It is safe for concurrent use; each
// Write is written contiguously, not interleaved with another.
//
// The directory is opened once, by NewFileRotator, and every file is
// opened, created and removed in it without following a link: a link (or
// a FIFO, a directory, a hard link) planted in place of a log file is
// removed and a fresh file created, so the writer never writes anywhere
// else than in its directory.
type FileRotator struct {
	dir      *beneath.Root
	base     string
	maxFiles int
	maxSize  int64

	// mu serialises writes: holding it across file I/O is the point, as the
	// file, its size and its index change together.
	mu sync.Mutex // guards the fields below
	f  *os.File
	n  int   // index of f
	sz int64 // bytes in f
	// endsLine reports whether f is empty or ends with '\n'.
	endsLine bool
	closed   bool
}

var _ io.WriteCloser = (*FileRotator)(nil)

// NewFileRotator opens the rotator, creating dir if needed. dir is trusted
// (links in its path are followed); the files in it are not (see
// FileRotator). It continues after existing files: it appends to the
// highest-numbered one if that is below maxFileSizeBytes, else it starts
// the next index. maxFiles and maxFileSizeBytes must be positive.
func NewFileRotator(dir, baseName string, maxFiles int, maxFileSizeBytes int64) (*FileRotator, error) {
	if err := checkArgs(baseName, maxFiles, maxFileSizeBytes); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("log rotator %q: create dir: %w", baseName, err)
	}
	d, err := beneath.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("log rotator %q: %w", baseName, err)
	}
	return newFileRotator(d, baseName, maxFiles, maxFileSizeBytes)
}

// NewFileRotatorBeneath is NewFileRotator for a dir that lies beneath
// root, where untrusted processes write (the task logs in
// "<alloc>/alloc/logs", root being the alloc dir): dir is created and
// opened beneath root without following any link, so that a link planted
// in place of dir, or of a directory above it, makes it fail instead of
// writing elsewhere. root is trusted.
func NewFileRotatorBeneath(root, dir, baseName string, maxFiles int, maxFileSizeBytes int64) (*FileRotator, error) {
	if err := checkArgs(baseName, maxFiles, maxFileSizeBytes); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsAbs(dir) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("log rotator %q: dir %q is not beneath %q", baseName, dir, root)
	}
	r, err := beneath.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("log rotator %q: %w", baseName, err)
	}
	defer r.Close()
	if err := r.MkdirAll(rel, 0o755); err != nil {
		return nil, fmt.Errorf("log rotator %q: create dir: %w", baseName, err)
	}
	d, err := r.OpenRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("log rotator %q: %w", baseName, err)
	}
	return newFileRotator(d, baseName, maxFiles, maxFileSizeBytes)
}

func checkArgs(baseName string, maxFiles int, maxFileSizeBytes int64) error {
	if maxFiles < 1 {
		return fmt.Errorf("log rotator %q: max files must be at least 1, got %d", baseName, maxFiles)
	}
	if maxFileSizeBytes < 1 {
		return fmt.Errorf("log rotator %q: max file size must be positive, got %d", baseName, maxFileSizeBytes)
	}
	if baseName == "" || baseName == "." || baseName == ".." || filepath.Base(baseName) != baseName {
		return fmt.Errorf("log rotator: base name %q is not a file name", baseName)
	}
	return nil
}

// newFileRotator starts a rotator in d, which it then owns.
func newFileRotator(d *beneath.Root, baseName string, maxFiles int, maxFileSizeBytes int64) (*FileRotator, error) {
	r := &FileRotator{dir: d, base: baseName, maxFiles: maxFiles, maxSize: maxFileSizeBytes}
	fail := func(err error) (*FileRotator, error) {
		if r.f != nil {
			r.f.Close()
		}
		d.Close()
		return nil, err
	}
	idx, err := indexesIn(d, baseName)
	if err != nil {
		return fail(err)
	}
	n := 0
	if len(idx) > 0 {
		n = idx[len(idx)-1]
	}
	if err := r.open(n); err != nil {
		return fail(err)
	}
	if r.sz >= r.maxSize {
		if err := r.rotate(); err != nil {
			return fail(err)
		}
	} else if err := r.purge(); err != nil {
		return fail(err)
	}
	return r, nil
}

// open opens (appending) or creates file n and records its size and
// whether it ends a line. Called with mu held or before r is shared.
func (r *FileRotator) open(n int) error {
	name := fileName(r.base, n)
	f, err := r.openLog(name)
	if err != nil {
		return fmt.Errorf("open log file %q: %w", filepath.Join(r.dir.Name(), name), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log file %q: %w", f.Name(), err)
	}
	r.f, r.n, r.sz, r.endsLine = f, n, fi.Size(), true
	if r.sz > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, r.sz-1); err == nil {
			r.endsLine = last[0] == '\n'
		}
	}
	return nil
}

// openLog opens name for appending (creating it), never through a link
// and never blocking. What is there and is not a regular file of ours
// with one link (a link, FIFO, directory, hard link, or a file a task
// created) is removed and a new file created. A directory that tasks can
// write to may see the entry replaced again meanwhile: that is retried a
// few times, then an error.
func (r *FileRotator) openLog(name string) (*os.File, error) {
	const flags = os.O_RDWR | os.O_APPEND | os.O_CREATE | syscall.O_NONBLOCK
	var err error
	for range 4 {
		var fi fs.FileInfo
		fi, err = r.dir.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		case !ours(fi):
			if err := r.dir.RemoveAll(name); err != nil {
				return nil, fmt.Errorf("replace what was planted there: %w", err)
			}
		}
		var f *os.File
		f, err = r.dir.OpenFile(name, flags, 0o644)
		if err == nil {
			if fi, serr := f.Stat(); serr == nil && ours(fi) {
				return f, nil
			}
			f.Close()
			continue
		}
		if !errors.Is(err, beneath.ErrSymlink) && !errors.Is(err, syscall.ENXIO) &&
			!errors.Is(err, syscall.EISDIR) && !errors.Is(err, fs.ErrPermission) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("something keeps being planted there: %w", err)
}

// ours reports whether fi is a regular file with one link owned by this
// process's user: a log file the rotator may append to.
func ours(fi fs.FileInfo) bool {
	if !fi.Mode().IsRegular() || nlink(fi) != 1 {
		return false
	}
	uid := -1
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		uid = int(st.Uid)
	case *unix.Stat_t:
		uid = int(st.Uid)
	}
	return uid == os.Geteuid()
}

// nlink is the link count of fi (1 where unknown).
func nlink(fi fs.FileInfo) uint64 {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Nlink)
	case *unix.Stat_t:
		return uint64(st.Nlink)
	}
	return 1
}

// Write writes p, rotating as needed. It returns len(p) unless a file
// operation fails; then it returns how much was written, and the error.
func (r *FileRotator) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, fmt.Errorf("write log %q: %w", r.base, os.ErrClosed)
	}
	written := 0
	for len(p) > 0 {
		room := r.maxSize - r.sz
		if int64(len(p)) <= room {
			n, err := r.write(p)
			return written + n, err
		}
		// p does not fit: write up to the last line break that fits.
		cut := int(max(room, 0))
		if i := bytes.LastIndexByte(p[:cut], '\n'); i >= 0 {
			cut = i + 1
		} else if r.sz > 0 && r.endsLine {
			// The file ends a line and no whole line fits: start the next
			// file rather than splitting a line.
			cut = 0
		}
		// Otherwise (an empty file, or one ending mid-line) fill the file:
		// the line is split either way.
		if cut > 0 {
			n, err := r.write(p[:cut])
			written += n
			if err != nil {
				return written, err
			}
			p = p[cut:]
		}
		if err := r.rotate(); err != nil {
			return written, err
		}
	}
	return written, nil
}

// write writes p to the current file. Called with mu held.
func (r *FileRotator) write(p []byte) (int, error) {
	n, err := r.f.Write(p)
	r.sz += int64(n)
	if n > 0 {
		r.endsLine = p[n-1] == '\n'
	}
	if err != nil {
		return n, fmt.Errorf("write log file %q: %w", r.f.Name(), err)
	}
	return n, nil
}

// rotate closes the current file, opens the next one and deletes the
// oldest files beyond the limit. Called with mu held.
func (r *FileRotator) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("close log file %q: %w", r.f.Name(), err)
	}
	if err := r.open(r.n + 1); err != nil {
		return err
	}
	return r.purge()
}

// purge deletes the files older than the newest maxFiles. Called with mu
// held or before r is shared.
func (r *FileRotator) purge() error {
	idx, err := indexesIn(r.dir, r.base)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range idx {
		if n > r.n-r.maxFiles {
			break
		}
		if err := r.dir.Remove(fileName(r.base, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("delete old log file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Flush makes what was written durable (fsync of the current file). Writes
// are not buffered, so Flush is only needed for durability across a crash
// of the machine, not of the process.
func (r *FileRotator) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("sync log file %q: %w", r.f.Name(), err)
	}
	return nil
}

// Close flushes and closes the current file. Later Writes fail; a second
// Close does nothing.
func (r *FileRotator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	errSync := r.f.Sync()
	errClose := r.f.Close()
	r.dir.Close()
	if err := errors.Join(errSync, errClose); err != nil {
		return fmt.Errorf("close log file %q: %w", r.f.Name(), err)
	}
	return nil
}
