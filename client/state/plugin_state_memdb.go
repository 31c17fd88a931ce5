package state

import (
	"bytes"

	"github.com/drover-io/drover/structs"
)

// GetDriverPluginStates returns copies of the stored driver plugin states.
func (m *MemDB) GetDriverPluginStates() (map[string][]byte, error) {
	return m.getPluginStates("driver")
}

// PutDriverPluginState stores a copy of a driver plugin's state.
func (m *MemDB) PutDriverPluginState(name string, data []byte) error {
	return m.putPluginState("driver", name, data)
}

// DeleteDriverPluginState removes a driver plugin's state.
func (m *MemDB) DeleteDriverPluginState(name string) error {
	return m.deletePluginState("driver", name)
}

// GetDevicePluginStates returns copies of the stored device plugin states.
func (m *MemDB) GetDevicePluginStates() (map[string][]byte, error) {
	return m.getPluginStates("device")
}

// PutDevicePluginState stores a copy of a device plugin's state.
func (m *MemDB) PutDevicePluginState(name string, data []byte) error {
	return m.putPluginState("device", name, data)
}

// DeleteDevicePluginState removes a device plugin's state.
func (m *MemDB) DeleteDevicePluginState(name string) error {
	return m.deletePluginState("device", name)
}

func (m *MemDB) getPluginStates(kind string) (map[string][]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	out := make(map[string][]byte, len(m.plugins[kind]))
	for name, data := range m.plugins[kind] {
		out[name] = bytes.Clone(data)
	}
	return out, nil
}

func (m *MemDB) putPluginState(kind, name string, data []byte) error {
	if name == "" {
		return structs.Invalid("put %s plugin state: missing plugin name", kind)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.plugins == nil {
		m.plugins = make(map[string]map[string][]byte)
	}
	if m.plugins[kind] == nil {
		m.plugins[kind] = make(map[string][]byte)
	}
	m.plugins[kind][name] = bytes.Clone(data)
	return nil
}

func (m *MemDB) deletePluginState(kind, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	delete(m.plugins[kind], name)
	return nil
}
