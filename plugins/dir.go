package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// ScanDir returns the executable regular files (symlinks followed) in a
// plugin_dir, sorted: the plugin binaries the driver and device managers
// launch. A missing dir, or "", holds none.
func ScanDir(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plugin_dir: %w", err)
	}
	var paths []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := os.Stat(path) // follows symlinks
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}
