package client

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
)

// Bounds of the reconciliation of shims at start.
const (
	// reconcileStopTimeout bounds the stop of one shim nobody knows.
	reconcileStopTimeout = 30 * time.Second
	// reconcileParallel is how many such shims are stopped at once.
	reconcileParallel = 8
)

// reconcileShims compares the shims under the alloc dirs (raw_exec and
// exec tasks: "<alloc dir>/.shims/<task>-<invocation>") with what the
// restored allocations know (each task's handle or start intent), and
// stops every shim of an invocation they do not know: the task of an
// allocation whose state was lost or could not be restored, of a state
// file moved aside, or of a start nobody recorded. No restored runner can
// re-attach to such a task, and a new one may be started in its place:
// left running, it would be an orphan, or a duplicate. A shim still being
// launched is fenced so that it never starts its task (shim.Abandon).
//
// It runs once per agent start, before the runners run; the shims of
// known invocations are left to their runners (which re-attach to them,
// or find them by their start intent). It logs what it stopped and how
// long it took.
func (c *Client) reconcileShims() {
	begin := time.Now()
	known := make(map[string]bool)
	for _, ar := range c.allocs {
		for _, cfg := range ar.TaskInvocations() {
			if dir, err := shim.TaskStateDir(cfg); err == nil {
				known[filepath.Clean(dir)] = true
			}
		}
	}
	dirs, err := shim.StateDirs(c.root)
	if err != nil {
		c.logger.Error("reconcile shims: could not list their state dirs; shims nobody knows may keep running", "error", err)
	}
	var unknown []string
	for _, dir := range dirs {
		if !known[dir] {
			unknown = append(unknown, dir)
		}
	}
	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, reconcileParallel)
		mu      sync.Mutex // guards the field below
		stopped int
	)
	for _, dir := range unknown {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if c.abandonShim(dir) {
				mu.Lock()
				stopped++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	c.logger.Info("reconciled shims with the client state", "shim_dirs", len(dirs), "known", len(dirs)-len(unknown),
		"unknown", len(unknown), "stopped", stopped, "duration", time.Since(begin))
}

// abandonShim makes sure the shim of dir (unknown to the state) neither
// runs nor starts its task, and reports whether one was live. The dir of a
// shim that ran and exited is left alone: nothing of it runs (its task
// died with it), and the alloc dir's removal takes it.
func (c *Client) abandonShim(dir string) bool {
	allocID := filepath.Base(filepath.Dir(filepath.Dir(dir)))
	live, err := shim.Live(dir)
	if err != nil {
		c.logger.Warn("reconcile shims: could not tell whether a shim runs", "alloc_id", allocID, "state_dir", dir, "error", err)
	}
	if !live && err == nil {
		if ran, err := shim.Published(dir); err == nil && ran {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(c.ctx, reconcileStopTimeout)
	defer cancel()
	if err := shim.Abandon(ctx, dir); err != nil {
		c.logger.Error("reconcile shims: could not stop a shim the client state does not know; its task may run unsupervised",
			"alloc_id", allocID, "state_dir", dir, "error", err)
		return false
	}
	if live {
		c.logger.Warn("reconcile shims: stopped a shim the client state does not know (its task was killed)",
			"alloc_id", allocID, "state_dir", dir)
	}
	return live
}
