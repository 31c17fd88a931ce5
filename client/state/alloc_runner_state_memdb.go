package state

import "github.com/drover-io/drover/structs"

// GetAllocRunnerState returns a copy of the alloc runner's stored state.
func (m *MemDB) GetAllocRunnerState(allocID string) (*AllocRunnerLocalState, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	return m.arStates[allocID].Copy(), nil
}

// PutAllocRunnerState stores a copy of the alloc runner's state.
func (m *MemDB) PutAllocRunnerState(allocID string, s *AllocRunnerLocalState) error {
	if allocID == "" {
		return structs.Invalid("put alloc runner state: missing allocation ID")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.arStates == nil {
		m.arStates = make(map[string]*AllocRunnerLocalState)
	}
	m.arStates[allocID] = s.Copy()
	return nil
}
