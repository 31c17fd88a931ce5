package httpapi

import (
	"net/http"
	"sort"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/device"
)

// registerStatsRoutes adds the client stats endpoints.
func (s *Server) registerStatsRoutes(rt *router) {
	rt.handle("/v1/client/allocation/{id}/stats", s.wrap(s.clientAllocStats), http.MethodGet)
	rt.handle("/v1/client/stats", s.wrap(s.clientHostStats), http.MethodGet)
}

// clientAllocStats is GET /v1/client/allocation/:id/stats: per task and,
// aggregated, per allocation. CPU and memory are the tasks' latest driver
// samples (their sum for the allocation); an instance used by several
// tasks is counted once in its group of the aggregate.
func (s *Server) clientAllocStats(_ http.ResponseWriter, req *http.Request) (any, error) {
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	byTask := nc.TaskDeviceStats(alloc)
	samples, err := nc.AllocTaskStats(alloc.ID)
	if err != nil {
		return nil, err
	}
	out := &api.AllocResourceUsage{Tasks: map[string]*api.TaskResourceUsage{}, Timestamp: now}
	var all []*device.DeviceGroupStats
	for _, name := range allocTaskNames(alloc) {
		out.Tasks[name] = apiTaskUsage(samples[name], apiDeviceStats(byTask[name]), now)
		all = append(all, byTask[name]...)
	}
	total := apiTaskUsage(stats.SumTasks(samples), apiDeviceStats(mergeDeviceStats(all)), now)
	out.ResourceUsage, out.Timestamp = total.ResourceUsage, total.Timestamp
	return out, nil
}

// clientHostStats is GET /v1/client/stats: the client's host sample
// (CPU since its previous sample, memory, the alloc dir's disk, uptime)
// and the devices' statistics.
func (s *Server) clientHostStats(_ http.ResponseWriter, _ *http.Request) (any, error) {
	nc, err := s.localClient()
	if err != nil {
		return nil, err
	}
	hs, err := nc.HostStats()
	if err != nil {
		// Collect returns what it could read along with the error.
		s.logger.Debug("host stats incomplete", "error", err)
	}
	out := &api.HostStats{Timestamp: time.Now().UnixNano()}
	fillHostStats(out, hs)
	out.DeviceStats = apiDeviceStats(nc.HostDeviceStats())
	return out, nil
}

// mergeDeviceStats merges groups by vendor/type/name: an instance in
// several (used by several tasks) is counted once.
func mergeDeviceStats(groups []*device.DeviceGroupStats) []*device.DeviceGroupStats {
	byKey := map[string]*device.DeviceGroupStats{}
	var keys []string
	for _, g := range groups {
		key := g.Vendor + "/" + g.Type + "/" + g.Name
		m := byKey[key]
		if m == nil {
			m = &device.DeviceGroupStats{Vendor: g.Vendor, Type: g.Type, Name: g.Name, InstanceStats: map[string]*device.DeviceStats{}}
			byKey[key] = m
			keys = append(keys, key)
		}
		for id, st := range g.InstanceStats {
			m.InstanceStats[id] = st
		}
	}
	sort.Strings(keys)
	out := make([]*device.DeviceGroupStats, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

func apiDeviceStats(in []*device.DeviceGroupStats) []*api.DeviceGroupStats {
	if len(in) == 0 {
		return nil
	}
	out := make([]*api.DeviceGroupStats, 0, len(in))
	for _, g := range in {
		ag := &api.DeviceGroupStats{Vendor: g.Vendor, Type: g.Type, Name: g.Name, InstanceStats: make(map[string]*api.DeviceStats, len(g.InstanceStats))}
		for id, st := range g.InstanceStats {
			ag.InstanceStats[id] = &api.DeviceStats{Summary: apiStatValue(st.Summary), Stats: apiStatObject(st.Stats), Timestamp: st.Timestamp}
		}
		out = append(out, ag)
	}
	return out
}

func apiStatValue(v *device.StatValue) *api.StatValue {
	if v == nil {
		return nil
	}
	return &api.StatValue{FloatNumeratorVal: v.FloatNumeratorVal, FloatDenominatorVal: v.FloatDenominatorVal,
		IntNumeratorVal: v.IntNumeratorVal, IntDenominatorVal: v.IntDenominatorVal,
		StringVal: v.StringVal, BoolVal: v.BoolVal, Unit: v.Unit, Desc: v.Desc}
}

func apiStatObject(o *device.StatObject) *api.StatObject {
	if o == nil {
		return nil
	}
	out := &api.StatObject{}
	if o.Nested != nil {
		out.Nested = make(map[string]*api.StatObject, len(o.Nested))
		for k, v := range o.Nested {
			out.Nested[k] = apiStatObject(v)
		}
	}
	if o.Attributes != nil {
		out.Attributes = make(map[string]*api.StatValue, len(o.Attributes))
		for k, v := range o.Attributes {
			out.Attributes[k] = apiStatValue(v)
		}
	}
	return out
}
