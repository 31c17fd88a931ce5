package state

import (
	"errors"
	"sync"

	"github.com/drover-io/drover/structs"
)

// ErrClosed is returned by a StateDB used after Close.
var ErrClosed = errors.New("state database is closed")

var _ StateDB = (*MemDB)(nil)

// MemDB is an in-memory StateDB for tests and -dev mode. Its zero value is
// not usable; call NewMemDB.
type MemDB struct {
	mu     sync.RWMutex // guards the fields below
	closed bool
	allocs map[string]*structs.Allocation
	tasks  map[string]map[string]*taskEntry // alloc ID -> task name
	node   *NodeIdentity
	// nodeMeta is the node's dynamic metadata.
	nodeMeta map[string]*string
	// plugins holds external plugin states by kind ("driver", "device"),
	// then plugin name.
	plugins map[string]map[string][]byte
	// arStates holds the alloc runners' own states by alloc ID.
	arStates map[string]*AllocRunnerLocalState
}

type taskEntry struct {
	local *LocalState
	state *structs.TaskState
}

// NewMemDB returns an empty in-memory state database.
func NewMemDB() *MemDB {
	return &MemDB{
		allocs: make(map[string]*structs.Allocation),
		tasks:  make(map[string]map[string]*taskEntry),
	}
}

// GetAllAllocations returns copies of every stored allocation.
func (m *MemDB) GetAllAllocations() ([]*structs.Allocation, map[string]error, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, nil, ErrClosed
	}
	out := make([]*structs.Allocation, 0, len(m.allocs))
	for _, a := range m.allocs {
		out = append(out, a.Copy())
	}
	return out, nil, nil
}

// PutAllocation stores alloc itself, not a copy: an allocation is
// immutable once handed on (StateDB), and a -dev agent with 1,000
// allocations would otherwise hold 1,000 more copies.
func (m *MemDB) PutAllocation(alloc *structs.Allocation) error {
	if alloc == nil || alloc.ID == "" {
		return structs.Invalid("put allocation: missing allocation ID")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.allocs[alloc.ID] = alloc
	return nil
}

// DeleteAllocationBucket removes an allocation and its tasks' state.
func (m *MemDB) DeleteAllocationBucket(allocID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	delete(m.allocs, allocID)
	delete(m.tasks, allocID)
	delete(m.arStates, allocID)
	return nil
}

// GetTaskRunnerState returns copies of a task's stored states.
func (m *MemDB) GetTaskRunnerState(allocID, taskName string) (*LocalState, *structs.TaskState, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, nil, ErrClosed
	}
	e := m.tasks[allocID][taskName]
	if e == nil {
		return nil, nil, nil
	}
	return e.local.Copy(), e.state.Copy(), nil
}

// PutTaskRunnerLocalState stores a copy of a task's local state.
func (m *MemDB) PutTaskRunnerLocalState(allocID, taskName string, ls *LocalState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.entry(allocID, taskName).local = ls.Copy()
	return nil
}

// PutTaskState stores a copy of a task's state.
func (m *MemDB) PutTaskState(allocID, taskName string, ts *structs.TaskState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.entry(allocID, taskName).state = ts.Copy()
	return nil
}

// DeleteTaskBucket removes one task's state.
func (m *MemDB) DeleteTaskBucket(allocID, taskName string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if ts := m.tasks[allocID]; ts != nil {
		delete(ts, taskName)
	}
	return nil
}

// GetNodeIdentity returns the stored node identity, or an empty one.
func (m *MemDB) GetNodeIdentity() (*NodeIdentity, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	if m.node == nil {
		return &NodeIdentity{}, nil
	}
	c := *m.node
	return &c, nil
}

// PutNodeIdentity stores a copy of the node identity.
func (m *MemDB) PutNodeIdentity(id *NodeIdentity) error {
	if id == nil {
		return structs.Invalid("put node identity: nil identity")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	c := *id
	m.node = &c
	return nil
}

// Close marks the database closed.
func (m *MemDB) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// entry returns the task's entry, creating it. m.mu must be held.
func (m *MemDB) entry(allocID, taskName string) *taskEntry {
	ts := m.tasks[allocID]
	if ts == nil {
		ts = make(map[string]*taskEntry)
		m.tasks[allocID] = ts
	}
	e := ts[taskName]
	if e == nil {
		e = &taskEntry{}
		ts[taskName] = e
	}
	return e
}
