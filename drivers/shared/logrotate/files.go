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
)

// Files returns the paths of the existing files "<dir>/<base>.<n>", oldest
// (lowest n) first. A missing dir yields no files and no error.
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

// indexes returns the indexes n of the files "<base>.<n>" in dir, ascending.
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
		if n, ok := parseIndex(e.Name(), base); ok && e.Type().IsRegular() {
			idx = append(idx, n)
		}
	}
	slices.Sort(idx)
	return idx, nil
}

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
	return filepath.Join(dir, base+"."+strconv.Itoa(n))
}
