package taskrunner

import (
	"context"
	"fmt"
	"maps"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// taskHook is what every task hook implements.
type taskHook interface {
	// Name identifies the hook in logs and errors.
	Name() string
}

// prestartHook runs before each start of the task.
type prestartHook interface {
	taskHook
	Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error
}

// eventEmitter records task events; the TaskRunner implements it for its hooks.
type eventEmitter interface {
	EmitEvent(ev *structs.TaskEvent)
}

// PrestartRequest is what a prestart hook is given.
type PrestartRequest struct {
	Alloc    *structs.Allocation
	Task     *structs.Task
	AllocDir *allocdir.AllocDir
	TaskDir  *allocdir.TaskDir
	// Env is the environment built by earlier hooks; read-only.
	Env map[string]string
	// PreviousState is the State this hook returned on an earlier run for
	// this task, possibly in an agent that has since restarted (it is
	// persisted in the task's LocalState); nil when it saved none. It is
	// the hook's own copy.
	PreviousState map[string]string
}

// PrestartResponse is what a prestart hook returns.
type PrestartResponse struct {
	// Env entries are merged into the task's environment.
	Env map[string]string
	// StdoutPath and StderrPath, when set, are where the task's logs go.
	StdoutPath string
	StderrPath string
	// Done means the hook's work is finished: it is not run again for
	// this task, not even by a restarted agent (Done is persisted). What
	// a skipped hook returned is not replayed, so a hook whose response
	// the task needs on every start must not report Done.
	Done bool
	// State, when not nil, replaces the hook's saved state: it is
	// persisted before the task starts and given back as PreviousState on
	// the hook's next run, including after an agent restart. nil keeps
	// the saved state; an empty map saves an empty state.
	State map[string]string
	// Mounts and Devices are added to the driver's TaskConfig (the
	// device hook's reservations).
	Mounts  []*drivers.MountConfig
	Devices []*drivers.DeviceConfig
}

// hookResources is what the prestart hooks produced; it is used to build
// the driver's TaskConfig. Only the run loop touches it.
type hookResources struct {
	env        map[string]string
	stdoutPath string
	stderrPath string
	// mounts and devices are rebuilt on every run of the hooks.
	mounts  []*drivers.MountConfig
	devices []*drivers.DeviceConfig
}

// runPrestartHooks runs the prestart hooks in order, skipping those that
// reported Done on an earlier run (or before an agent restart), giving
// each the state it saved and persisting the state it returns.
func (tr *TaskRunner) runPrestartHooks(ctx context.Context) error {
	alloc, task := tr.allocAndTask()
	tr.resources.mounts, tr.resources.devices = nil, nil
	for _, h := range tr.prestartHooks {
		if tr.hooksDone[h.Name()] {
			continue
		}
		prev := tr.hookState(h.Name())
		req := &PrestartRequest{
			Alloc:    alloc,
			Task:     task,
			AllocDir: tr.allocDir,
			TaskDir:  tr.taskDir,
			Env:      maps.Clone(tr.resources.env),
		}
		if prev != nil {
			req.PreviousState = maps.Clone(prev.Data)
		}
		var resp PrestartResponse
		if err := h.Prestart(ctx, req, &resp); err != nil {
			return fmt.Errorf("prestart hook %q: %w", h.Name(), err)
		}
		if resp.Env != nil {
			if tr.resources.env == nil {
				tr.resources.env = make(map[string]string, len(resp.Env))
			}
			maps.Copy(tr.resources.env, resp.Env)
		}
		if resp.StdoutPath != "" {
			tr.resources.stdoutPath = resp.StdoutPath
		}
		if resp.StderrPath != "" {
			tr.resources.stderrPath = resp.StderrPath
		}
		tr.resources.mounts = append(tr.resources.mounts, resp.Mounts...)
		tr.resources.devices = append(tr.resources.devices, resp.Devices...)
		if resp.Done {
			tr.hooksDone[h.Name()] = true
		}
		tr.saveHookState(h.Name(), prev, &resp)
	}
	return nil
}

// hookState returns a copy of the state a hook saved; nil when none.
func (tr *TaskRunner) hookState(name string) *state.HookState {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	return tr.local.HookState[name].Copy()
}

// saveHookState records and persists what a hook's response changes in
// its saved state (prev): its State and its Done flag.
func (tr *TaskRunner) saveHookState(name string, prev *state.HookState, resp *PrestartResponse) {
	next := prev.Copy()
	if next == nil {
		if resp.State == nil && !resp.Done {
			return
		}
		next = &state.HookState{}
	}
	if resp.State != nil {
		next.Data = maps.Clone(resp.State)
	}
	if resp.Done {
		next.Done = true
	}
	if next.Equal(prev) {
		return
	}
	tr.updateLocal("hook "+name+" state", func(ls *state.LocalState) {
		if ls.HookState == nil {
			ls.HookState = make(map[string]*state.HookState)
		}
		ls.HookState[name] = next
	})
}
