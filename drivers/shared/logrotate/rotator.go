package logrotate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// FileRotator is an io.WriteCloser that writes to "<dir>/<base>.<n>",
// moving to n+1 when the size limit would be exceeded and deleting the
// oldest files beyond the file limit. It is safe for concurrent use; each
// Write is written contiguously, not interleaved with another.
type FileRotator struct {
	dir      string
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

// NewFileRotator opens the rotator, creating dir if needed. It continues
// after existing files: it appends to the highest-numbered one if that is
// below maxFileSizeBytes, else it starts the next index. maxFiles and
// maxFileSizeBytes must be positive.
func NewFileRotator(dir, baseName string, maxFiles int, maxFileSizeBytes int64) (*FileRotator, error) {
	if maxFiles < 1 {
		return nil, fmt.Errorf("log rotator %q: max files must be at least 1, got %d", baseName, maxFiles)
	}
	if maxFileSizeBytes < 1 {
		return nil, fmt.Errorf("log rotator %q: max file size must be positive, got %d", baseName, maxFileSizeBytes)
	}
	if baseName == "" {
		return nil, errors.New("log rotator: empty base name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("log rotator %q: create dir: %w", baseName, err)
	}
	r := &FileRotator{dir: dir, base: baseName, maxFiles: maxFiles, maxSize: maxFileSizeBytes}
	idx, err := indexes(dir, baseName)
	if err != nil {
		return nil, err
	}
	n := 0
	if len(idx) > 0 {
		n = idx[len(idx)-1]
	}
	if err := r.open(n); err != nil {
		return nil, err
	}
	if r.sz >= r.maxSize {
		if err := r.rotate(); err != nil {
			r.f.Close()
			return nil, err
		}
	} else if err := r.purge(); err != nil {
		r.f.Close()
		return nil, err
	}
	return r, nil
}

// open opens (appending) or creates file n and records its size and
// whether it ends a line. Called with mu held or before r is shared.
func (r *FileRotator) open(n int) error {
	path := filePath(r.dir, r.base, n)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log file %q: %w", path, err)
	}
	r.f, r.n, r.sz, r.endsLine = f, n, fi.Size(), true
	if r.sz > 0 {
		last := make([]byte, 1)
		if rf, err := os.Open(path); err == nil {
			if _, err := rf.ReadAt(last, r.sz-1); err == nil {
				r.endsLine = last[0] == '\n'
			}
			rf.Close()
		}
	}
	return nil
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
	idx, err := indexes(r.dir, r.base)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range idx {
		if n > r.n-r.maxFiles {
			break
		}
		if err := os.Remove(filePath(r.dir, r.base, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
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
	if err := errors.Join(errSync, errClose); err != nil {
		return fmt.Errorf("close log file %q: %w", r.f.Name(), err)
	}
	return nil
}
