package allocdir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/beneath"
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

// Directory permissions. The shared alloc/, its tmp/ and data/ and a task's
// local/ and tmp/ are world-writable with the sticky bit (tasks may run as
// other users); alloc/logs is written by the agent and the shims only:
// tasks read their logs but cannot create, replace or remove anything
// there. Secrets are private to the task's user.
const (
	sharedPerm  os.FileMode = 0o777 | os.ModeSticky
	dirPerm     os.FileMode = 0o755
	logsPerm    os.FileMode = 0o755
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

	root string // the client's alloc root, holding AllocDir
	id   string
	// logger says when a secrets directory cannot be a tmpfs.
	logger *slog.Logger
	// secretsTmpfs mounts a tmpfs on each task's secrets directory.
	secretsTmpfs bool
	// mount is mount(2); tests fake a refusal.
	mount mountFunc
	// idErr is set when id cannot be a directory name; the paths above
	// are then empty and Build fails with it.
	idErr error

	mu        sync.Mutex // guards the fields below
	built     bool
	destroyed bool
	taskDirs  map[string]*TaskDir
}

// Option configures an AllocDir.
type Option func(*AllocDir)

// WithLogger sets the logger (with the allocation's alloc_id) that says
// when a task's secrets directory cannot be a tmpfs; nothing is logged
// otherwise.
func WithLogger(l *slog.Logger) Option {
	return func(d *AllocDir) {
		if l != nil {
			d.logger = l
		}
	}
}

// WithSecretsTmpfs mounts a tmpfs on each task's secrets directory when
// on is true (see TaskDir.Build); the agent's client turns it on. Off (the
// default, for tests that build alloc dirs in temporary directories they
// remove), secrets directories are plain directories.
func WithSecretsTmpfs(on bool) Option {
	return func(d *AllocDir) { d.secretsTmpfs = on }
}

// New returns the AllocDir of allocID under root. It creates nothing;
// call Build. An allocID that is not a plain directory name gives an
// AllocDir without paths whose Build fails.
func New(root, allocID string, opts ...Option) *AllocDir {
	d := &AllocDir{
		root: root, id: allocID, taskDirs: make(map[string]*TaskDir),
		logger: slog.New(slog.DiscardHandler), mount: syscall.Mount,
	}
	for _, o := range opts {
		o(d)
	}
	if d.idErr = checkName("alloc ID", allocID); d.idErr != nil {
		return d
	}
	d.AllocDir = filepath.Join(root, allocID)
	d.SharedDir = filepath.Join(d.AllocDir, SharedAllocName)
	d.LogDir = filepath.Join(d.SharedDir, LogDirName)
	return d
}

// Build creates the alloc directory and its shared subdirectories, and
// (re)sets their permissions. It is idempotent. Every path is created
// beneath the alloc root without following a link: a link a task planted
// in place of one of them fails the build.
func (d *AllocDir) Build() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.destroyed {
		return ErrDestroyed
	}
	if d.idErr != nil {
		return fmt.Errorf("build alloc dir: %w", d.idErr)
	}
	root, err := beneath.OpenRoot(d.root)
	if err != nil {
		return fmt.Errorf("build alloc dir: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(d.id, dirPerm); err != nil {
		return fmt.Errorf("build alloc dir: %w", err)
	}
	alloc, err := d.open()
	if err != nil {
		return fmt.Errorf("build alloc dir: %w", err)
	}
	defer alloc.Close()
	for _, p := range []struct {
		name string
		perm os.FileMode
	}{
		{SharedAllocName, sharedPerm},
		{filepath.Join(SharedAllocName, LogDirName), logsPerm},
		{filepath.Join(SharedAllocName, TmpDirName), sharedPerm},
		{filepath.Join(SharedAllocName, DataDirName), sharedPerm},
	} {
		if err := mkdirPerm(alloc, p.name, p.perm); err != nil {
			return fmt.Errorf("build alloc dir: %w", err)
		}
	}
	d.built = true
	return nil
}

// NewTaskDir returns the task's directory, creating nothing; call its Build.
// Calling it twice for a name returns the same TaskDir. A name that is not
// a plain directory name (see the package doc) gives a TaskDir without
// paths whose Build fails.
func (d *AllocDir) NewTaskDir(name string) *TaskDir {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td, ok := d.taskDirs[name]; ok {
		return td
	}
	td := &TaskDir{name: name, alloc: d, nameErr: d.idErr}
	if td.nameErr == nil {
		td.nameErr = checkTaskName(name)
	}
	if td.nameErr == nil {
		dir := filepath.Join(d.AllocDir, name)
		td.Dir = dir
		td.LocalDir = filepath.Join(dir, LocalDirName)
		td.SecretsDir = filepath.Join(dir, SecretsDirName)
		td.TmpDir = filepath.Join(dir, TmpDirName)
		td.SharedDir = d.SharedDir
		td.LogDir = d.LogDir
	}
	d.taskDirs[name] = td
	return td
}

// Destroy removes the whole alloc directory. Later Builds fail with
// ErrDestroyed. Destroying twice is not an error. Links are removed, never
// followed; a file system still mounted below the alloc dir is left alone
// (with everything beneath it) and the error says so.
func (d *AllocDir) Destroy() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.destroyed = true
	if d.idErr != nil {
		return nil // nothing was ever built
	}
	root, err := beneath.OpenRoot(d.root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("destroy alloc dir %s: %w", d.AllocDir, err)
	}
	defer root.Close()
	// The secrets tmpfs go first (with their content): RemoveAll stops
	// at a mount point.
	if alloc, err := root.OpenRoot(d.id); err == nil {
		err = unmountSecrets(alloc)
		alloc.Close()
		if err != nil {
			return fmt.Errorf("destroy alloc dir %s: %w", d.AllocDir, err)
		}
	}
	if err := root.RemoveAll(d.id); err != nil {
		return fmt.Errorf("destroy alloc dir %s: %w", d.AllocDir, err)
	}
	return nil
}

// open opens the alloc directory as a Root: the client's alloc root is
// trusted, the alloc directory is opened beneath it.
func (d *AllocDir) open() (*beneath.Root, error) {
	root, err := beneath.OpenRoot(d.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.OpenRoot(d.id)
}

// Built reports whether Build succeeded and Destroy was not called since.
func (d *AllocDir) Built() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.built && !d.destroyed
}

// LogPaths returns where a task's current stdout and stderr logs are
// written: <alloc>/alloc/logs/<task>.stdout.0 and .stderr.0. Both are
// empty for a task name that cannot be a file name.
func (d *AllocDir) LogPaths(task string) (stdout, stderr string) {
	if d.idErr != nil || checkTaskName(task) != nil {
		return "", ""
	}
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

	name string
	// nameErr is set when the task's name cannot be a directory name;
	// the paths above are then empty and Build fails with it.
	nameErr error
	alloc   *AllocDir
}

// Build creates the task directory and its subdirectories, and (re)sets
// their permissions. It is idempotent; it fails with ErrDestroyed after the
// alloc dir was destroyed. As AllocDir.Build, it never follows a link.
//
// With WithSecretsTmpfs, the secrets directory is a tmpfs of
// SecretsSizeMB (noexec, nosuid, nodev, 0700), as in Nomad, so that
// secrets never reach the disk. A rebuild (an agent restart) keeps a
// tmpfs already mounted there and its content; where none can be mounted
// (an agent that is not root) the directory stays a plain one and a
// warning is logged. Destroy unmounts it.
func (t *TaskDir) Build() error {
	// Hold the alloc dir's lock so that a concurrent Destroy cannot
	// interleave with the mkdirs.
	t.alloc.mu.Lock()
	defer t.alloc.mu.Unlock()
	if t.alloc.destroyed {
		return ErrDestroyed
	}
	if t.nameErr != nil {
		return fmt.Errorf("build task dir: %w", t.nameErr)
	}
	alloc, err := t.alloc.open()
	if err != nil {
		return fmt.Errorf("build task dir: %w", err)
	}
	defer alloc.Close()
	if err := alloc.MkdirAll(t.name, dirPerm); err != nil {
		return fmt.Errorf("build task dir: %w", err)
	}
	for _, p := range []struct {
		name string
		perm os.FileMode
	}{{LocalDirName, sharedPerm}, {TmpDirName, sharedPerm}, {SecretsDirName, secretsPerm}} {
		if err := mkdirPerm(alloc, filepath.Join(t.name, p.name), p.perm); err != nil {
			return fmt.Errorf("build task dir: %w", err)
		}
	}
	secrets := filepath.Join(t.name, SecretsDirName)
	if t.alloc.secretsTmpfs {
		logger := t.alloc.logger.With("task", t.name)
		if err := mountSecrets(alloc, secrets, t.alloc.mount, logger); err != nil {
			return fmt.Errorf("build task dir: secrets: %w", err)
		}
	}
	// The tmpfs's own root gets the mode too (a kept one included).
	if err := alloc.Chmod(secrets, secretsPerm); err != nil {
		return fmt.Errorf("build task dir: %w", err)
	}
	return nil
}

// mkdirPerm creates name beneath root (if missing) and sets its
// permissions, also on a directory that already existed.
func mkdirPerm(root *beneath.Root, name string, perm os.FileMode) error {
	if err := root.MkdirAll(name, perm); err != nil {
		return err
	}
	return root.Chmod(name, perm)
}
