package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A shim's state dir describes the shim by itself, so that an agent that
// died while starting a task, before it could save the shim's State, can
// still find the shim from the state dir alone (Find):
//
//   - spec.json is written by Start before it launches the shim. The shim
//     locks it (flock) before it reads it and holds the lock until it
//     exits: a locked spec means a live shim.
//   - state.json is written by the shim (atomically, synced) once the task
//     runs and before Start returns: the State that Start returns.
//   - exit.json is written once the task exited.
//
// An unlocked spec without state.json belongs to a shim that never started
// the task: Find then removes the spec, so that a shim still being
// launched finds no spec once it gets the lock, and exits without starting
// the task.

// ErrNotStarted means no shim ran, or will ever run, the task of a state
// dir: Find returns it for a start that never got as far as the task.
var ErrNotStarted = errors.New("no shim started the task")

// stateFile is the State the shim publishes in its state dir.
const stateFile = "state.json"

// findPoll is how often Find looks again while a live shim has not yet
// published its state (it is starting the task).
const findPoll = 20 * time.Millisecond

// Find returns a handle to the shim of stateDir without a persisted State:
// for an agent that died after it asked Start for a shim and before it
// saved the State. When the shim runs, Find attaches to it (as Attach);
// when it exited after starting the task, the handle reports the recorded
// exit; when it died without one, the error wraps ErrShimDied (its
// leftovers killed, as Attach does). When no shim started the task, Find
// makes sure none will and returns an error wrapping ErrNotStarted. A shim
// still starting is waited for, until ctx ends.
func Find(ctx context.Context, stateDir string) (*Handle, error) {
	_, h, err := find(ctx, stateDir)
	return h, err
}

// find is Find that also returns the shim's published State, when there
// is one (also when its shim died).
func find(ctx context.Context, stateDir string) (*State, *Handle, error) {
	for {
		st, err := readState(stateDir)
		if err != nil {
			return nil, nil, err
		}
		if st != nil {
			h, err := Attach(ctx, st)
			return st, h, err
		}
		st, h, found, err := claimUnstarted(ctx, stateDir)
		if found || err != nil {
			return st, h, err
		}
		// A shim holds the spec: it is starting the task and publishes
		// its state once the task runs (or exits, releasing the spec).
		t := time.NewTimer(findPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("find shim in %s: a shim is starting but has not published its state: %w", stateDir, ctx.Err())
		case <-t.C:
		}
	}
}

// claimUnstarted decides a state dir without a published state: found is
// false while a shim holds the spec (it is starting); otherwise find's
// answer is in st, h and err.
func claimUnstarted(ctx context.Context, stateDir string) (st *State, h *Handle, found bool, err error) {
	specPath := filepath.Join(stateDir, specFile)
	f, err := os.Open(specPath)
	if errors.Is(err, fs.ErrNotExist) {
		// Start never launched a shim here, or Find fenced it before.
		return nil, nil, true, fmt.Errorf("find shim in %s: %w", stateDir, ErrNotStarted)
	}
	if err != nil {
		return nil, nil, true, fmt.Errorf("find shim in %s: %w", stateDir, err)
	}
	defer f.Close()
	locked, err := tryLockFile(f)
	if err != nil {
		return nil, nil, true, fmt.Errorf("find shim in %s: lock spec: %w", stateDir, err)
	}
	if !locked {
		return nil, nil, false, nil
	}
	defer unlockFile(f)
	// No shim holds the spec, and none can start the task without it. One
	// that exited may have published its state just before: look again.
	st, err = readState(stateDir)
	if err != nil {
		return nil, nil, true, err
	}
	if st != nil {
		h, err := Attach(ctx, st)
		return st, h, true, err
	}
	if err := os.Remove(specPath); err != nil {
		return nil, nil, true, fmt.Errorf("find shim in %s: remove the spec of a shim that never started: %w", stateDir, err)
	}
	if err := syncDir(stateDir); err != nil {
		return nil, nil, true, fmt.Errorf("find shim in %s: %w", stateDir, err)
	}
	return nil, nil, true, fmt.Errorf("find shim in %s: %w", stateDir, ErrNotStarted)
}

// Live reports whether a shim runs for stateDir: its spec is locked. It
// reads no state and starts nothing.
func Live(stateDir string) (bool, error) {
	f, err := os.Open(filepath.Join(stateDir, specFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("shim state dir %s: %w", stateDir, err)
	}
	defer f.Close()
	locked, err := tryLockFile(f)
	if err != nil {
		return false, fmt.Errorf("shim state dir %s: lock spec: %w", stateDir, err)
	}
	if locked {
		unlockFile(f)
	}
	return !locked, nil
}

// Published reports whether a shim published its state in stateDir: it
// started the task (it may have exited since).
func Published(stateDir string) (bool, error) {
	_, err := os.Stat(filepath.Join(stateDir, stateFile))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("shim state dir %s: %w", stateDir, err)
}

// lockSpec opens the spec in stateDir and locks it for the shim's
// lifetime, waiting while an agent's Find holds it; it fails when the spec
// is gone (Find fenced a shim that had not started yet). The returned
// file holds the lock until it is closed (or the shim exits); it is not
// inherited by the task (close-on-exec).
func lockSpec(stateDir string) (*os.File, error) {
	path := filepath.Join(stateDir, specFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open shim spec: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock shim spec: %w", err)
	}
	// Find removes the spec, holding the lock, to fence a shim that has
	// not started: then this one must not start either.
	if _, err := os.Stat(path); err != nil {
		f.Close()
		return nil, fmt.Errorf("shim spec withdrawn by the agent before the task started: %w", err)
	}
	return f, nil
}

// readSpecFrom decodes and validates a spec from an open spec file.
func readSpecFrom(f *os.File) (*Spec, error) {
	b, err := io.ReadAll(io.LimitReader(f, 1<<24))
	if err != nil {
		return nil, fmt.Errorf("read shim spec: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode shim spec: %w", err)
	}
	return s.validate()
}

// writeState publishes st in its state dir, atomically and synced.
func writeState(st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode shim state: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(st.StateDir, stateFile), b, 0o600); err != nil {
		return fmt.Errorf("publish shim state: %w", err)
	}
	return nil
}

// readState returns the State a shim published in stateDir, or nil and no
// error when there is none.
func readState(stateDir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read shim state in %s: %w", stateDir, err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("decode shim state in %s: %w", stateDir, err)
	}
	if st.Version != StateVersion {
		return nil, fmt.Errorf("shim state in %s has version %d, this drover reads %d", stateDir, st.Version, StateVersion)
	}
	if filepath.Clean(st.StateDir) != filepath.Clean(stateDir) {
		return nil, fmt.Errorf("shim state in %s names state dir %q", stateDir, st.StateDir)
	}
	return &st, nil
}

// tryLockFile takes an exclusive flock on f without waiting; false when
// another holds it.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// abandonTimeout bounds how long Start waits, after it gave up on a
// shim, for that shim to be stopped or fenced.
const abandonTimeout = 10 * time.Second

// Abandon makes sure that no shim runs, or will run, the task of stateDir:
// a shim still starting is fenced (it will not start the task), and one
// that runs the task is told to SIGKILL it and waited for. It is for
// shims nobody should have: an agent's start that failed half-way, or a
// shim the agent's state does not know. It returns nil once nothing runs
// (the shim too has exited).
func Abandon(ctx context.Context, stateDir string) error {
	h, err := Find(ctx, stateDir)
	switch {
	case errors.Is(err, ErrNotStarted), errors.Is(err, ErrShimDied):
		return nil // nothing runs (the leftovers of a dead shim killed)
	case err != nil:
		return fmt.Errorf("abandon shim: %w", err)
	}
	if err := h.Stop(ctx, "SIGKILL", 0); err != nil {
		return fmt.Errorf("abandon shim: %w", err)
	}
	// The shim exits right after it answered: wait for that too.
	st := h.State()
	tick := time.NewTicker(findPoll)
	defer tick.Stop()
	for processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("abandon shim: its task is dead but shim pid %d has not exited: %w", st.ShimPID, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// abandonStart abandons the shim of a Start that failed; ctx may be done
// already: the abandon gets its own bound.
func abandonStart(ctx context.Context, stateDir string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	return Abandon(ctx, stateDir)
}
