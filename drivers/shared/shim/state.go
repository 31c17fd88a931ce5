package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
)

// StateVersion is the version of State's format; Attach rejects others.
const StateVersion = 1

// State is what an agent persists to re-attach to a shim after a restart.
// It is JSON-serialisable. Start times are in clock ticks since boot (field
// 22 of /proc/<pid>/stat) and, with BootID, tell a live process from an
// unrelated one that reused its pid.
type State struct {
	Version        int       `json:"version"`
	ShimPID        int       `json:"shim_pid"`
	ShimStartTicks uint64    `json:"shim_start_ticks"`
	TaskPID        int       `json:"task_pid"`
	TaskStartTicks uint64    `json:"task_start_ticks"`
	BootID         string    `json:"boot_id"`
	SocketPath     string    `json:"socket_path"`
	StateDir       string    `json:"state_dir"`
	StartedAt      time.Time `json:"started_at"`
	// Cgroup is the task's cgroup when it runs isolated (Spec.Isolation):
	// a driver destroys it when the shim died (Attach and Wait do).
	Cgroup *isolation.Cgroup `json:"cgroup,omitempty"`
}

// ExitStatus is how the task ended. A task killed by a signal has Signal
// set and ExitCode 128+Signal, as a shell reports it.
type ExitStatus struct {
	ExitCode int `json:"exit_code"`
	Signal   int `json:"signal,omitempty"`
	// OOMKilled is true when the kernel's OOM killer killed a process of
	// an isolated task's cgroup.
	OOMKilled bool      `json:"oom_killed,omitempty"`
	ExitedAt  time.Time `json:"exited_at"`
	// Version is the exit file's format version.
	Version int `json:"version"`
}

// Status is the task's state as the shim sees it.
type Status struct {
	// Running is true until the task's exit is recorded.
	Running   bool      `json:"running"`
	TaskPID   int       `json:"task_pid"`
	StartedAt time.Time `json:"started_at"`
	// Exit is set once the task has exited.
	Exit *ExitStatus `json:"exit,omitempty"`
	// Stopping is true once a stop was requested.
	Stopping bool `json:"stopping,omitempty"`
}

// exitFileVersion is the version of the exit file's format.
const exitFileVersion = 1

// writeFileAtomic writes b to path through a temporary file in the same
// directory: write, fsync, rename, fsync the directory. Readers see the old
// file or the whole new one, also after a crash.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func writeExit(stateDir string, e *ExitStatus) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode exit: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(stateDir, exitFile), b, 0o600); err != nil {
		return fmt.Errorf("record task exit: %w", err)
	}
	return nil
}

// readExit returns the recorded exit, or nil and no error when there is
// none yet.
func readExit(stateDir string) (*ExitStatus, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, exitFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read task exit: %w", err)
	}
	var e ExitStatus
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode task exit file: %w", err)
	}
	if e.Version != exitFileVersion {
		return nil, fmt.Errorf("task exit file has version %d, this drover reads %d", e.Version, exitFileVersion)
	}
	return &e, nil
}
