package allocwatcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/beneath"
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
// dest's copy of it must be absent or empty. Both alloc dirs must lie in
// the same client alloc root; every path is resolved beneath it without
// following a link, so a link a task planted in either alloc dir fails
// the move instead of moving, copying or removing anything elsewhere.
func MoveAllocData(src, dest *allocdir.AllocDir, tasks []string) error {
	base := filepath.Dir(src.AllocDir)
	if filepath.Dir(dest.AllocDir) != base {
		return fmt.Errorf("alloc dirs %s and %s are not in the same alloc root", src.AllocDir, dest.AllocDir)
	}
	root, err := beneath.OpenRoot(base)
	if err != nil {
		return err
	}
	defer root.Close()
	from, to := filepath.Base(src.AllocDir), filepath.Base(dest.AllocDir)
	rels := []string{path.Join(allocdir.SharedAllocName, allocdir.DataDirName)}
	for _, t := range tasks {
		rels = append(rels, path.Join(t, allocdir.LocalDirName))
	}
	for _, rel := range rels {
		if err := moveDir(root, path.Join(from, rel), path.Join(to, rel)); err != nil {
			return err
		}
	}
	return nil
}

// moveDir renames from to to (both beneath root), replacing an empty to.
func moveDir(root *beneath.Root, from, to string) error {
	fi, err := root.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", from)
	}
	if err := root.MkdirAll(path.Dir(to), 0o755); err != nil {
		return err
	}
	// Remove fails on a non-empty directory: existing data is never lost.
	if err := root.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w", to, err)
	}
	err = root.Rename(from, to)
	if errors.Is(err, syscall.EXDEV) {
		if err := copyTree(root, from, to); err != nil {
			return err
		}
		return root.RemoveAll(from)
	}
	return err
}

// copyTree copies directories, regular files and symlinks under from to
// to (both beneath root), never following a link.
func copyTree(root *beneath.Root, from, to string) error {
	fi, err := root.Lstat(from)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := root.Mkdir(to, fi.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid)); err != nil {
			return err
		}
		entries, err := root.ReadDir(from)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(root, from+"/"+e.Name(), to+"/"+e.Name()); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		link, err := root.Readlink(from)
		if err != nil {
			return err
		}
		return root.Symlink(link, to)
	case fi.Mode().IsRegular():
		return copyFile(root, from, to, fi.Mode().Perm())
	}
	return nil
}

func copyFile(root *beneath.Root, from, to string, perm fs.FileMode) error {
	in, err := root.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s changed while it was copied", from)
	}
	out, err := root.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
