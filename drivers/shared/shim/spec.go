package shim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Spec is what a shim runs and where it keeps its files. It is written to
// "<StateDir>/spec.json" (mode 0600: Env may hold secrets) and read by the
// shim process.
type Spec struct {
	// ID identifies the task invocation in the shim's own log; any string.
	ID string `json:"id"`
	// Command is the program to run: an absolute path, a path relative to
	// Dir, or a name looked up in the PATH of Env (else of the shim).
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env is the task's complete environment ("KEY=value"); nil is empty.
	Env []string `json:"env,omitempty"`
	// Dir is the task's working directory; empty is the shim's ("/").
	Dir string `json:"dir,omitempty"`
	// User, when set, is the user name or numeric uid the task runs as (the
	// shim must then run as root). Its primary and supplementary groups
	// come from the user database. Not used with Isolation, whose Spec
	// carries the uid and gids.
	User string `json:"user,omitempty"`

	// Isolation, when set, runs the task isolated (the exec driver)
	// instead of as a plain child: Command, Args, Env, Dir and User are
	// then unused, Isolation.Spec says what runs. See Isolation.
	Isolation *Isolation `json:"isolation,omitempty"`

	// NetNSPath, when set, is a network namespace (a bind-mounted nsfs
	// file, such as the allocation's bridge namespace) that the shim, and
	// so the task, runs in: Start launches the shim from a thread that
	// joined it. Unset: the caller's network.
	NetNSPath string `json:"netns_path,omitempty"`

	// StdoutPath and StderrPath are the base paths of the task's logs: the
	// shim writes "<StdoutPath>.<n>" (n = 0, 1, ...), rotated by
	// logrotate, e.g. "<alloc>/alloc/logs/web.stdout" gives
	// "web.stdout.0", "web.stdout.1", ...
	StdoutPath string `json:"stdout_path"`
	StderrPath string `json:"stderr_path"`
	// LogRoot, when set, is a directory the log paths lie beneath (the
	// alloc dir): their directory is then opened beneath it without
	// following any link, as tasks write there. Without it the log
	// directory is trusted; the files in it are never followed either.
	LogRoot string `json:"log_root,omitempty"`
	// MaxFiles and MaxFileSizeMB bound each stream's files (Nomad's logs
	// block); 0 means the defaults, 10 files of 10 MB.
	MaxFiles      int `json:"max_files,omitempty"`
	MaxFileSizeMB int `json:"max_file_size_mb,omitempty"`

	// StateDir holds the spec, the exit file and the shim's own log. Use
	// one directory per task invocation, private to the agent (it is
	// created with mode 0700); remove it once the exit has been consumed.
	StateDir string `json:"state_dir"`
	// SocketPath is the unix socket the shim serves. It must be shorter
	// than 108 bytes (the kernel's limit); SocketPathFor picks one.
	SocketPath string `json:"socket_path"`
}

// Default log limits, as Nomad's logs block.
const (
	DefaultMaxFiles      = 10
	DefaultMaxFileSizeMB = 10
)

// maxSocketPath is the longest unix socket path that fits sun_path (108
// bytes including the terminating NUL).
const maxSocketPath = 107

// SocketPathFor returns a socket path for a shim whose state lives in
// stateDir: "<stateDir>/shim.sock" when that fits a unix socket address,
// else "<os.TempDir()>/drover-shim-<hash of stateDir>.sock".
func SocketPathFor(stateDir string) string {
	p := filepath.Join(stateDir, "shim.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "drover-shim-"+hex.EncodeToString(sum[:10])+".sock")
}

// validate checks spec and fills in defaults on the copy it returns.
func (s *Spec) validate() (*Spec, error) {
	if s == nil {
		return nil, errors.New("no spec")
	}
	c := *s
	var errs []error
	switch {
	case c.Isolation != nil:
		errs = append(errs, c.Isolation.validate(&c)...)
	case c.Command == "":
		errs = append(errs, errors.New("command is empty"))
	}
	if c.StdoutPath == "" || c.StderrPath == "" {
		errs = append(errs, errors.New("stdout and stderr paths are required"))
	}
	if c.StateDir == "" {
		errs = append(errs, errors.New("state dir is empty"))
	}
	if c.NetNSPath != "" && !filepath.IsAbs(c.NetNSPath) {
		errs = append(errs, fmt.Errorf("network namespace path %q is not absolute", c.NetNSPath))
	}
	if c.SocketPath == "" {
		c.SocketPath = SocketPathFor(c.StateDir)
	}
	if len(c.SocketPath) > maxSocketPath {
		errs = append(errs, fmt.Errorf("socket path %q is longer than %d bytes: use SocketPathFor", c.SocketPath, maxSocketPath))
	}
	if c.MaxFiles < 0 || c.MaxFileSizeMB < 0 {
		errs = append(errs, errors.New("log limits must not be negative"))
	}
	if c.MaxFiles == 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	if c.MaxFileSizeMB == 0 {
		c.MaxFileSizeMB = DefaultMaxFileSizeMB
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid shim spec: %w", err)
	}
	return &c, nil
}

// File names inside StateDir.
const (
	specFile = "spec.json"
	exitFile = "exit.json"
	logFile  = "shim.log"
)
