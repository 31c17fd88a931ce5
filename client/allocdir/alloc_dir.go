package allocdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Names of the shared and per-task subdirectories.
const (
	SharedAllocName = "alloc"
	LogDirName      = "logs"
	TmpDirName      = "tmp"
	DataDirName     = "data"
	LocalDirName    = "local"
	SecretsDirName  = "secrets"
)

// Directory permissions: shared dirs are world-writable with the sticky bit
// (tasks may run as other users); secrets are private.
const (
	sharedPerm  os.FileMode = 0o777 | os.ModeSticky
	dirPerm     os.FileMode = 0o755
	secretsPerm os.FileMode = 0o700
)

// ErrDestroyed is returned when building in an AllocDir that was destroyed.
var ErrDestroyed = errors.New("alloc dir was destroyed")

// AllocDir is one allocation's directory tree.
type AllocDir struct {
	// AllocDir is <root>/<alloc id>.
	AllocDir string
	// SharedDir is <root>/<alloc id>/alloc, shared by all tasks.
	SharedDir string
	// LogDir is <root>/<alloc id>/alloc/logs.
	LogDir string

	mu        sync.Mutex // guards the fields below
	built     bool
	destroyed bool
	taskDirs  map[string]*TaskDir
}

// New returns the AllocDir of allocID under root. It creates nothing;
// call Build.
func New(root, allocID string) *AllocDir {
	dir := filepath.Join(root, allocID)
	shared := filepath.Join(dir, SharedAllocName)
	return &AllocDir{
		AllocDir:  dir,
		SharedDir: shared,
		LogDir:    filepath.Join(shared, LogDirName),
		taskDirs:  make(map[string]*TaskDir),
	}
}

// Build creates the alloc directory and its shared subdirectories. It is
// idempotent.
func (d *AllocDir) Build() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.destroyed {
		return ErrDestroyed
	}
	if err := os.MkdirAll(d.AllocDir, dirPerm); err != nil {
		return fmt.Errorf("build alloc dir: %w", err)
	}
	for _, p := range []string{d.SharedDir, d.LogDir, filepath.Join(d.SharedDir, TmpDirName), filepath.Join(d.SharedDir, DataDirName)} {
		if err := mkdirPerm(p, sharedPerm); err != nil {
			return fmt.Errorf("build alloc dir: %w", err)
		}
	}
	d.built = true
	return nil
}

// NewTaskDir returns the task's directory, creating nothing; call its Build.
// Calling it twice for a name returns the same TaskDir.
func (d *AllocDir) NewTaskDir(name string) *TaskDir {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td, ok := d.taskDirs[name]; ok {
		return td
	}
	dir := filepath.Join(d.AllocDir, name)
	td := &TaskDir{
		Dir:        dir,
		LocalDir:   filepath.Join(dir, LocalDirName),
		SecretsDir: filepath.Join(dir, SecretsDirName),
		TmpDir:     filepath.Join(dir, TmpDirName),
		SharedDir:  d.SharedDir,
		LogDir:     d.LogDir,
		alloc:      d,
	}
	d.taskDirs[name] = td
	return td
}

// Destroy removes the whole alloc directory. Later Builds fail with
// ErrDestroyed. Destroying twice is not an error.
func (d *AllocDir) Destroy() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.destroyed = true
	if err := os.RemoveAll(d.AllocDir); err != nil {
		return fmt.Errorf("destroy alloc dir %s: %w", d.AllocDir, err)
	}
	return nil
}

// Built reports whether Build succeeded and Destroy was not called since.
func (d *AllocDir) Built() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.built && !d.destroyed
}

// LogPaths returns where a task's current stdout and stderr logs are
// written: <alloc>/alloc/logs/<task>.stdout.0 and .stderr.0.
func (d *AllocDir) LogPaths(task string) (stdout, stderr string) {
	return filepath.Join(d.LogDir, task+".stdout.0"), filepath.Join(d.LogDir, task+".stderr.0")
}

// TaskDir is one task's directory tree.
type TaskDir struct {
	// Dir is <alloc>/<task>.
	Dir string
	// LocalDir is <alloc>/<task>/local.
	LocalDir string
	// SecretsDir is <alloc>/<task>/secrets.
	SecretsDir string
	// TmpDir is <alloc>/<task>/tmp.
	TmpDir string
	// SharedDir is <alloc>/alloc.
	SharedDir string
	// LogDir is <alloc>/alloc/logs.
	LogDir string

	alloc *AllocDir
}

// Build creates the task directory and its subdirectories. It is
// idempotent; it fails with ErrDestroyed after the alloc dir was destroyed.
func (t *TaskDir) Build() error {
	// Hold the alloc dir's lock so that a concurrent Destroy cannot
	// interleave with the mkdirs.
	t.alloc.mu.Lock()
	defer t.alloc.mu.Unlock()
	if t.alloc.destroyed {
		return ErrDestroyed
	}
	if err := os.MkdirAll(t.Dir, dirPerm); err != nil {
		return fmt.Errorf("build task dir: %w", err)
	}
	for _, p := range []struct {
		path string
		perm os.FileMode
	}{{t.LocalDir, sharedPerm}, {t.TmpDir, sharedPerm}, {t.SecretsDir, secretsPerm}} {
		if err := mkdirPerm(p.path, p.perm); err != nil {
			return fmt.Errorf("build task dir: %w", err)
		}
	}
	return nil
}

// mkdirPerm creates dir (if missing) and sets its permissions, which
// MkdirAll would filter through the umask.
func mkdirPerm(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return os.Chmod(dir, perm)
}
