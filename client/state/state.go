package state

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// StateDB is the node agent's local, persistent state. Implementations
// must be safe for concurrent use and must return copies. They store
// copies too, except of an allocation: allocations are immutable once
// handed on (a new version replaces one), so PutAllocation's caller must
// not change the allocation afterwards and MemDB keeps it as it is.
type StateDB interface {
	// GetAllAllocations returns every stored allocation. Allocations that
	// could not be decoded are returned in errs by ID instead of failing
	// the whole read.
	GetAllAllocations() (allocs []*structs.Allocation, errs map[string]error, err error)
	// PutAllocation stores (creates or replaces) an allocation, which the
	// caller must not change afterwards.
	PutAllocation(alloc *structs.Allocation) error
	// DeleteAllocationBucket removes an allocation and all its tasks' state.
	DeleteAllocationBucket(allocID string) error

	// GetTaskRunnerState returns a task's local state and task state; both
	// are nil when nothing was stored.
	GetTaskRunnerState(allocID, taskName string) (*LocalState, *structs.TaskState, error)
	// PutTaskRunnerLocalState stores a task's local state.
	PutTaskRunnerLocalState(allocID, taskName string, ls *LocalState) error
	// PutTaskState stores a task's TaskState.
	PutTaskState(allocID, taskName string, ts *structs.TaskState) error
	// DeleteTaskBucket removes one task's state.
	DeleteTaskBucket(allocID, taskName string) error

	// GetAllocRunnerState returns an allocation runner's own state; nil
	// when none was stored.
	GetAllocRunnerState(allocID string) (*AllocRunnerLocalState, error)
	// PutAllocRunnerState stores (creates or replaces) an allocation
	// runner's own state. DeleteAllocationBucket removes it.
	PutAllocRunnerState(allocID string, s *AllocRunnerLocalState) error

	// GetNodeIdentity returns the node's ID and secret; empty strings when
	// none was stored yet.
	GetNodeIdentity() (*NodeIdentity, error)
	// PutNodeIdentity stores the node's ID and secret.
	PutNodeIdentity(id *NodeIdentity) error

	// GetNodeMeta returns the node's dynamic metadata (set through the
	// API at run time): a value by key, nil for a key unset (which hides
	// the static value of that key); nil when none was stored.
	GetNodeMeta() (map[string]*string, error)
	// PutNodeMeta stores (replaces) the node's dynamic metadata.
	PutNodeMeta(meta map[string]*string) error

	// GetDriverPluginStates returns the persisted state of every external
	// driver plugin (its re-attach config, opaque JSON) by plugin name;
	// an empty map when none was stored.
	GetDriverPluginStates() (map[string][]byte, error)
	// PutDriverPluginState stores (creates or replaces) a driver plugin's
	// state.
	PutDriverPluginState(name string, data []byte) error
	// DeleteDriverPluginState removes a driver plugin's state; removing
	// one that is absent is not an error.
	DeleteDriverPluginState(name string) error

	// GetDevicePluginStates, PutDevicePluginState and
	// DeleteDevicePluginState are the same for external device plugins,
	// kept apart from the drivers' (a driver and a device plugin may
	// share a name).
	GetDevicePluginStates() (map[string][]byte, error)
	PutDevicePluginState(name string, data []byte) error
	DeleteDevicePluginState(name string) error

	// Close releases the database. Calls after Close fail.
	Close() error
}

// NodeIdentity is the node's ID, generated once, and the secret it uses to
// authenticate its RPCs.
type NodeIdentity struct {
	ID       string
	SecretID string
}

// LocalState is a TaskRunner's own persisted state.
type LocalState struct {
	// InvocationID identifies the task's current run (a uuid substring).
	InvocationID string
	// TaskHandle is the driver's handle of the running task; nil when the
	// task is not running. A handle without DriverState is one found
	// from a StartIntent: the driver finds the task by its Config again.
	TaskHandle *drivers.TaskHandle
	// StartIntent is written, durably, before the driver is asked to
	// start invocation InvocationID with this config, and replaced by
	// TaskHandle once the driver returns it (or cleared if the start
	// failed). A restarted agent that finds an intent without a handle
	// died during the start: it asks the driver to find the task by the
	// intent (a TaskHandle holding only Config) instead of starting a
	// second one. nil when no start is in flight (and in files written
	// before it existed).
	StartIntent *drivers.TaskConfig
	// HookState is the state the task's hooks saved, by hook name; nil
	// when no hook saved any (and in files written before it existed).
	// It outlives invocations: a new start or a cleared handle keeps it.
	HookState map[string]*HookState
}

// HookState is what one task hook saved, so that after an agent restart
// (or before the task's next start) it need not redo its work.
type HookState struct {
	// Data is the hook's own state, opaque to the runner; nil when the
	// hook saved none.
	Data map[string]string
	// Done records that the hook reported its work finished: it is not
	// run again for this task, even by a restarted agent.
	Done bool
}

// Copy returns a deep copy of the hook state.
func (h *HookState) Copy() *HookState {
	if h == nil {
		return nil
	}
	return &HookState{Data: maps.Clone(h.Data), Done: h.Done}
}

// Equal reports whether two hook states hold the same values; a nil Data
// differs from an empty one.
func (h *HookState) Equal(o *HookState) bool {
	if h == nil || o == nil {
		return h == o
	}
	return h.Done == o.Done && (h.Data == nil) == (o.Data == nil) && maps.Equal(h.Data, o.Data)
}

// copyHookStates returns a deep copy of a task's hook states, keeping a
// nil map nil and an empty one empty.
func copyHookStates(m map[string]*HookState) map[string]*HookState {
	if m == nil {
		return nil
	}
	c := make(map[string]*HookState, len(m))
	for k, v := range m {
		c[k] = v.Copy()
	}
	return c
}

// equalHookStates compares two tasks' hook states like HookState.Equal.
func equalHookStates(a, b map[string]*HookState) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

// Copy returns a copy of the local state that shares its task handle
// and start intent: those are immutable once made (a driver's handle is
// replaced, never changed), and with 1,000 tasks a copy of each in every
// holder (the task runner, the state database, the driver proxy) was the
// largest part of the agent's heap. Hook states are copied.
func (s *LocalState) Copy() *LocalState {
	if s == nil {
		return nil
	}
	c := *s
	c.HookState = copyHookStates(s.HookState)
	return &c
}

// Equal reports whether two local states hold the same values.
func (s *LocalState) Equal(o *LocalState) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.InvocationID != o.InvocationID || !equalHookStates(s.HookState, o.HookState) {
		return false
	}
	a, errA := json.Marshal(s.TaskHandle)
	b, errB := json.Marshal(o.TaskHandle)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		return false
	}
	a, errA = json.Marshal(s.StartIntent)
	b, errB = json.Marshal(o.StartIntent)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// CopyTaskHandle returns a deep copy of a driver task handle, for a
// holder that hands it to code it does not trust to leave it unchanged.
func CopyTaskHandle(h *drivers.TaskHandle) *drivers.TaskHandle {
	if h == nil {
		return nil
	}
	c := *h
	c.DriverState = bytes.Clone(h.DriverState)
	c.Config = CopyTaskConfig(h.Config)
	return &c
}

// CopyTaskConfig returns a copy of a driver task config deep enough for
// the state: its maps, raw config and resources are its own.
func CopyTaskConfig(cfg *drivers.TaskConfig) *drivers.TaskConfig {
	if cfg == nil {
		return nil
	}
	c := *cfg
	c.Env = maps.Clone(cfg.Env)
	c.RawConfig = bytes.Clone(cfg.RawConfig)
	if cfg.Resources != nil {
		r := *cfg.Resources
		c.Resources = &r
	}
	return &c
}
