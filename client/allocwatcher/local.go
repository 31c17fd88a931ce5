package allocwatcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/drover-io/drover/client/allocdir"
)

// localWatcher follows an allocation that runs on this node through its
// runner's broadcaster.
type localWatcher struct {
	prevID string
	runner AllocRunnerMeta
	// move: the group's disk is sticky, so alloc/data and the tasks'
	// local directories move to the new allocation.
	move   bool
	tasks  []string
	logger *slog.Logger

	waiting   atomic.Bool
	migrating atomic.Bool
}

var _ PrevAllocWatcher = (*localWatcher)(nil)

// Wait returns when the previous allocation is terminal on this client,
// or its runner is gone (destroyed: its listener's channel is closed).
func (w *localWatcher) Wait(ctx context.Context) error {
	w.waiting.Store(true)
	defer w.waiting.Store(false)
	l := w.runner.Listen()
	defer l.Close()
	for {
		select {
		case a, ok := <-l.Ch():
			if !ok {
				w.logger.Debug("previous alloc's runner is gone")
				return nil
			}
			if a.ClientTerminalStatus() {
				w.logger.Debug("previous alloc terminated", "client_status", a.ClientStatus)
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("wait for alloc %s: %w", w.prevID, ctx.Err())
		}
	}
}

// IsWaiting reports whether Wait is blocked.
func (w *localWatcher) IsWaiting() bool { return w.waiting.Load() }

// IsMigrating reports whether Migrate is running.
func (w *localWatcher) IsMigrating() bool { return w.migrating.Load() }

// Migrate moves the previous allocation's alloc/data and each task's
// local/ directory into dest, when the group's disk is sticky.
func (w *localWatcher) Migrate(ctx context.Context, dest *allocdir.AllocDir) error {
	if !w.move {
		return nil
	}
	w.migrating.Store(true)
	defer w.migrating.Store(false)
	src := w.runner.AllocDir()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := MoveAllocData(src, dest, w.tasks); err != nil {
		return fmt.Errorf("move data of alloc %s: %w", w.prevID, err)
	}
	w.logger.Info("moved previous alloc's data", "from", src.AllocDir, "to", dest.AllocDir)
	return nil
}

// MoveAllocData moves src's alloc/data and the local/ directory of each
// named task into dest, by renaming on the same filesystem (copying and
// removing across filesystems). A directory missing in src is skipped;
// dest's copy of it must be absent or empty.
func MoveAllocData(src, dest *allocdir.AllocDir, tasks []string) error {
	pairs := [][2]string{{
		filepath.Join(src.SharedDir, allocdir.DataDirName),
		filepath.Join(dest.SharedDir, allocdir.DataDirName),
	}}
	for _, t := range tasks {
		pairs = append(pairs, [2]string{
			filepath.Join(src.AllocDir, t, allocdir.LocalDirName),
			filepath.Join(dest.AllocDir, t, allocdir.LocalDirName),
		})
	}
	for _, p := range pairs {
		if err := moveDir(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// moveDir renames from to to, replacing an empty to.
func moveDir(from, to string) error {
	fi, err := os.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", from)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	// Remove fails on a non-empty directory: existing data is never lost.
	if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w", to, err)
	}
	err = os.Rename(from, to)
	if errors.Is(err, syscall.EXDEV) {
		if err := copyTree(from, to); err != nil {
			return err
		}
		return os.RemoveAll(from)
	}
	return err
}

// copyTree copies directories, regular files and symlinks under from to to.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
