package shim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-io/drover/plugins/drivers"
)

// StatesDir is the directory under an alloc dir that holds the state dirs
// of the alloc's shims. It lies outside every task's directory (and so
// outside an isolated task's root) and goes with the alloc dir.
const StatesDir = ".shims"

// LogBases returns the base paths of the task's rotated logs: the shim
// writes "<base>.0", "<base>.1", ... The client passes the first file
// ("<logs>/<task>.stdout.0"), whose ".0" is stripped; a path without it is
// taken as the base; without paths, "<LogDir>/<task>.stdout" is used.
func LogBases(cfg *drivers.TaskConfig) (stdout, stderr string, err error) {
	base := func(path, stream string) string {
		if path != "" {
			return strings.TrimSuffix(path, ".0")
		}
		if cfg.TaskDir.LogDir == "" {
			return ""
		}
		return filepath.Join(cfg.TaskDir.LogDir, cfg.Name+"."+stream)
	}
	stdout, stderr = base(cfg.StdoutPath, "stdout"), base(cfg.StderrPath, "stderr")
	if stdout == "" || stderr == "" {
		return "", "", errors.New("no log paths: the task config has neither StdoutPath/StderrPath nor a log dir")
	}
	return stdout, stderr, nil
}

// TaskStateDir returns the state dir of the shim of this invocation of the
// task: "<AllocDir>/.shims/<task>-<invocation>", the invocation being the
// last part of the task ID ("<alloc>/<task>/<invocation>").
func TaskStateDir(cfg *drivers.TaskConfig) (string, error) {
	if cfg.AllocDir == "" {
		return "", errors.New("the task config has no alloc dir for the shim's state")
	}
	inv := cfg.ID
	if i := strings.LastIndexByte(inv, '/'); i >= 0 {
		inv = inv[i+1:]
	}
	return filepath.Join(cfg.AllocDir, StatesDir, SafeName(cfg.Name+"-"+inv)), nil
}

// SafeName keeps a path element to letters, digits, '-', '_' and '.', so
// that no task or ID can climb out of its parent directory.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	out := string(b)
	if strings.Trim(out, ".") == "" {
		out = "_" + out
	}
	return out
}

// RemoveDeadState removes the socket and state dir of a shim that Attach
// found dead (ErrShimDied), for which no Handle exists to Cleanup. Only
// the paths TaskStateDir and SocketPathFor give for cfg are removed: a
// State naming others is left alone, and an error says so.
func RemoveDeadState(cfg *drivers.TaskConfig, st *State) error {
	if dir, err := TaskStateDir(cfg); err != nil || dir != st.StateDir || st.SocketPath != SocketPathFor(dir) {
		return fmt.Errorf("not removing shim state at unexpected paths (state dir %q, socket %q)", st.StateDir, st.SocketPath)
	}
	return removeState(st.StateDir, st.SocketPath)
}

// FindTask is Find for the invocation of the task cfg describes, whose
// state dir is TaskStateDir(cfg): a driver's RecoverTask calls it for a
// start intent (a TaskHandle without DriverState, saved before StartTask).
// Unlike Find, it returns a handle for a task whose shim died after it
// started the task: the task did start, and the handle's Wait reports
// that its shim died (ErrShimDied; WaitResult gives ShimDiedResult), as
// for a task whose shim dies while the agent watches. When no shim
// started the task (ErrNotStarted), the state dir and socket are removed.
func FindTask(ctx context.Context, cfg *drivers.TaskConfig) (*Handle, error) {
	dir, err := TaskStateDir(cfg)
	if err != nil {
		return nil, err
	}
	st, h, err := find(ctx, dir)
	switch {
	case errors.Is(err, ErrShimDied) && st != nil:
		// Its leftovers were killed by the failed Attach.
		return &Handle{st: *st, orphansKilled: true}, nil
	case errors.Is(err, ErrNotStarted):
		if rerr := removeState(dir, SocketPathFor(dir)); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return h, err
}

// removeState removes a shim's socket and state dir.
func removeState(stateDir, socket string) error {
	err := os.Remove(socket)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err := errors.Join(err, os.RemoveAll(stateDir)); err != nil {
		return fmt.Errorf("remove the state of shim %s: %w", stateDir, err)
	}
	return nil
}

// StateDirs lists the shim state dirs under the alloc dirs of allocRoot
// ("<allocRoot>/<alloc>/.shims/<dir>"): every shim raw_exec and exec
// started for the allocations there, live or not. A missing root holds
// none.
func StateDirs(allocRoot string) ([]string, error) {
	allocs, err := os.ReadDir(allocRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list shim state dirs: %w", err)
	}
	var out []string
	for _, a := range allocs {
		if !a.IsDir() {
			continue
		}
		dirs, err := AllocStateDirs(filepath.Join(allocRoot, a.Name()))
		if err != nil {
			return out, err
		}
		out = append(out, dirs...)
	}
	return out, nil
}

// AllocStateDirs lists the shim state dirs of one alloc dir
// ("<allocDir>/.shims/<dir>"); none when it has no shims dir.
func AllocStateDirs(allocDir string) ([]string, error) {
	parent := filepath.Join(allocDir, StatesDir)
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list shim state dirs: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(parent, e.Name()))
		}
	}
	return out, nil
}
