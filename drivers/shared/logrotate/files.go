package logrotate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// Files returns the paths of the existing files "<dir>/<base>.<n>", oldest
// (lowest n) first. A missing dir yields no files and no error. Only
// regular files with one link are logs: a link, FIFO, directory or hard
// link planted under a log's name is not listed.
func Files(dir, base string) ([]string, error) {
	idx, err := indexes(dir, base)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(idx))
	for i, n := range idx {
		paths[i] = filePath(dir, base, n)
	}
	return paths, nil
}

// indexes returns the indexes n of the regular files "<base>.<n>" in dir,
// ascending.
func indexes(dir, base string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list log files %q in %q: %w", base, dir, err)
	}
	var idx []int
	for _, e := range entries {
		n, ok := parseIndex(e.Name(), base)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && nlink(fi) == 1 {
			idx = append(idx, n)
		}
	}
	slices.Sort(idx)
	return idx, nil
}

// indexesIn is indexes for the open directory d.
func indexesIn(d *beneath.Root, base string) ([]int, error) {
	entries, err := d.ReadDir(".")
	if err != nil {
		return nil, fmt.Errorf("list log files %q: %w", base, err)
	}
	var idx []int
	for _, e := range entries {
		if n, ok := parseIndex(e.Name(), base); ok && e.Mode().IsRegular() && nlink(e) == 1 {
			idx = append(idx, n)
		}
	}
	slices.Sort(idx)
	return idx, nil
}

// Open opens the log file path for reading: never through a link at its
// end, never blocking on a FIFO, and only a regular file (else an error
// wrapping ErrNotLog). The directories above it are the caller's to trust.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("open log file %q: %w", path, ErrNotLog)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open log file %q: %w", path, ErrNotLog)
	}
	return f, nil
}

// ErrNotLog is wrapped by Open's error for a path that is not a regular
// file (a link, a FIFO, a directory...).
var ErrNotLog = errors.New("not a regular file: not a log")

// parseIndex returns n when name is "<base>.<n>" with n a decimal number
// written without sign or leading zeros.
func parseIndex(name, base string) (int, bool) {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, false
	}
	return n, true
}

func filePath(dir, base string, n int) string {
	return filepath.Join(dir, fileName(base, n))
}

func fileName(base string, n int) string {
	return base + "." + strconv.Itoa(n)
}
