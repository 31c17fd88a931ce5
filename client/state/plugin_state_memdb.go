package state

import (
	"bytes"

	"github.com/drover-io/drover/structs"
)

// GetDriverPluginStates returns copies of the stored driver plugin states.
func (m *MemDB) GetDriverPluginStates() (map[string][]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	out := make(map[string][]byte, len(m.plugins))
	for name, data := range m.plugins {
		out[name] = bytes.Clone(data)
	}
	return out, nil
}

// PutDriverPluginState stores a copy of a driver plugin's state.
func (m *MemDB) PutDriverPluginState(name string, data []byte) error {
	if name == "" {
		return structs.Invalid("put driver plugin state: missing plugin name")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.plugins == nil {
		m.plugins = make(map[string][]byte)
	}
	m.plugins[name] = bytes.Clone(data)
	return nil
}

// DeleteDriverPluginState removes a driver plugin's state.
func (m *MemDB) DeleteDriverPluginState(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	delete(m.plugins, name)
	return nil
}
