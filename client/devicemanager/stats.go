package devicemanager

import (
	"reflect"
	"sort"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// applyStats keeps the statistics of mp's own fingerprinted devices and
// drops the rest with a logged reason.
func (m *Manager) applyStats(mp *managedPlugin, st *device.StatsResponse) {
	logger := m.logger.With("plugin", mp.name)
	if st == nil {
		return
	}
	if st.Error != nil {
		logger.Debug("device plugin could not collect stats", "error", st.Error)
	}
	m.mu.Lock()
	known := map[string]string{}
	for id, ref := range m.instances {
		if ref.plugin == mp.name {
			known[id] = ref.group
		}
	}
	kept, err := device.FilterStats(st.Groups, known)
	for _, g := range kept {
		for id, s := range g.InstanceStats {
			m.stats[id] = s
		}
	}
	m.mu.Unlock()
	if err != nil {
		logger.Warn("dropped invalid stats from device plugin", "reason", err)
	}
}

// InstanceStats returns the latest statistics of the instances of req, as
// one group; nil when none has any. Its cost is in req's instances only
// (the statistics are indexed by instance ID), whatever the node's size.
func (m *Manager) InstanceStats(req *structs.AllocatedDeviceResource) *device.DeviceGroupStats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out *device.DeviceGroupStats
	for _, id := range req.DeviceIDs {
		s, ok := m.stats[id]
		if !ok {
			continue
		}
		if out == nil {
			out = &device.DeviceGroupStats{Vendor: req.Vendor, Type: req.Type, Name: req.Name,
				InstanceStats: make(map[string]*device.DeviceStats, len(req.DeviceIDs))}
		}
		out.InstanceStats[id] = s
	}
	return out
}

// AllStats returns the latest statistics of every device of the node,
// grouped, sorted by vendor/type/name.
func (m *Manager) AllStats() []*device.DeviceGroupStats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	groups := map[string]*device.DeviceGroupStats{}
	for id, s := range m.stats {
		ref := m.instances[id]
		g := groups[ref.group]
		if g == nil {
			tuple := (&structs.RequestedDevice{Name: ref.group}).ID()
			g = &device.DeviceGroupStats{Vendor: tuple.Vendor, Type: tuple.Type, Name: tuple.Name,
				InstanceStats: map[string]*device.DeviceStats{}}
			groups[ref.group] = g
		}
		g.InstanceStats[id] = s
	}
	out := make([]*device.DeviceGroupStats, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		return groupKey(out[i].Vendor, out[i].Type, out[i].Name) < groupKey(out[j].Vendor, out[j].Type, out[j].Name)
	})
	return out
}

// sameDevices reports whether two device lists are equal.
func sameDevices(a, b []*structs.NodeDeviceResource) bool { return reflect.DeepEqual(a, b) }
