package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MoveAside renames the state file under dataDir to
// state.db.corrupt-<UTC timestamp of now> in the same directory and
// returns the new path. It is the remedy for a state file that
// NewBoltStateDB refuses (corrupt, or written by a newer drover): the
// next agent start creates an empty one. The file is renamed, never
// deleted or changed. MoveAside fails if the file does not exist, if the
// target name is taken, or if a running agent holds the file.
func MoveAside(dataDir string, now time.Time) (string, error) {
	path := StatePath(dataDir)
	dst := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")

	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("move state file aside: %s does not exist: %w", path, err)
		}
		return "", fmt.Errorf("move state file aside: %w", err)
	}
	defer f.Close()
	locked, err := tryLock(f)
	if err != nil {
		return "", fmt.Errorf("move state file aside: lock %s: %w", path, err)
	}
	if !locked {
		return "", lockedError(path, nil)
	}
	defer unlock(f)

	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("move state file aside: %s already exists", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("move state file aside: %w", err)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("move state file aside: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return dst, fmt.Errorf("move state file aside: sync directory: %w", err)
	}
	return dst, nil
}
