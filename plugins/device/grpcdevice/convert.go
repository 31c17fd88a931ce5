package grpcdevice

import (
	"maps"

	"github.com/drover-io/drover/plugins/base/grpcbase"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

func attributeToProto(in *device.Attribute) *proto.Attribute {
	if in == nil {
		return nil
	}
	return &proto.Attribute{FloatVal: in.Float, IntVal: in.Int, StringVal: in.String, BoolVal: in.Bool, Unit: in.Unit}
}

func attributeFromProto(in *proto.Attribute) *device.Attribute {
	if in == nil {
		return nil
	}
	return (&device.Attribute{Float: in.FloatVal, Int: in.IntVal, String: in.StringVal, Bool: in.BoolVal, Unit: in.GetUnit()}).Copy()
}

func fingerprintToProto(in *device.FingerprintResponse) *proto.Fingerprint {
	if in == nil {
		return nil
	}
	out := &proto.Fingerprint{Error: grpcbase.ErrToProto(in.Error)}
	for _, g := range in.Devices {
		if g == nil {
			continue // a nil element cannot cross the wire
		}
		pg := &proto.DeviceGroup{Vendor: g.Vendor, Type: g.Type, Name: g.Name}
		for _, d := range g.Devices {
			if d == nil {
				continue
			}
			pd := &proto.DeviceInstance{Id: d.ID, Healthy: d.Healthy, HealthDescription: d.HealthDesc}
			if d.HwLocality != nil {
				pd.HwLocality = &proto.DeviceLocality{PciBusId: d.HwLocality.PciBusID}
			}
			pg.Devices = append(pg.Devices, pd)
		}
		if g.Attributes != nil {
			pg.Attributes = make(map[string]*proto.Attribute, len(g.Attributes))
			for k, a := range g.Attributes {
				pg.Attributes[k] = attributeToProto(a)
			}
		}
		out.DeviceGroups = append(out.DeviceGroups, pg)
	}
	return out
}

func fingerprintFromProto(in *proto.Fingerprint) *device.FingerprintResponse {
	if in == nil {
		return nil
	}
	out := &device.FingerprintResponse{Error: grpcbase.ErrFromProto(in.Error)}
	for _, pg := range in.GetDeviceGroups() {
		g := &device.DeviceGroup{Vendor: pg.GetVendor(), Type: pg.GetType(), Name: pg.GetName()}
		for _, pd := range pg.GetDevices() {
			d := &device.Device{ID: pd.GetId(), Healthy: pd.GetHealthy(), HealthDesc: pd.GetHealthDescription()}
			if l := pd.GetHwLocality(); l != nil {
				d.HwLocality = &device.DeviceLocality{PciBusID: l.GetPciBusId()}
			}
			g.Devices = append(g.Devices, d)
		}
		if pg.GetAttributes() != nil {
			g.Attributes = make(map[string]*device.Attribute, len(pg.GetAttributes()))
			for k, a := range pg.GetAttributes() {
				g.Attributes[k] = attributeFromProto(a)
			}
		}
		out.Devices = append(out.Devices, g)
	}
	return out
}

func reservationToProto(in *device.ContainerReservation) *proto.ContainerReservation {
	if in == nil {
		return nil
	}
	out := &proto.ContainerReservation{Envs: maps.Clone(in.Envs)}
	for _, m := range in.Mounts {
		if m != nil {
			out.Mounts = append(out.Mounts, &proto.Mount{TaskPath: m.TaskPath, HostPath: m.HostPath, ReadOnly: m.ReadOnly})
		}
	}
	for _, d := range in.Devices {
		if d != nil {
			out.Devices = append(out.Devices, &proto.DeviceSpec{TaskPath: d.TaskPath, HostPath: d.HostPath, CgroupPerms: d.CgroupPerms})
		}
	}
	return out
}

func reservationFromProto(in *proto.ContainerReservation) *device.ContainerReservation {
	if in == nil {
		return nil
	}
	out := &device.ContainerReservation{Envs: maps.Clone(in.GetEnvs())}
	for _, m := range in.GetMounts() {
		out.Mounts = append(out.Mounts, &device.Mount{TaskPath: m.GetTaskPath(), HostPath: m.GetHostPath(), ReadOnly: m.GetReadOnly()})
	}
	for _, d := range in.GetDevices() {
		out.Devices = append(out.Devices, &device.DeviceSpec{TaskPath: d.GetTaskPath(), HostPath: d.GetHostPath(), CgroupPerms: d.GetCgroupPerms()})
	}
	return out
}

func statValueToProto(in *device.StatValue) *proto.StatValue {
	if in == nil {
		return nil
	}
	return &proto.StatValue{
		FloatNumerator: in.FloatNumeratorVal, FloatDenominator: in.FloatDenominatorVal,
		IntNumerator: in.IntNumeratorVal, IntDenominator: in.IntDenominatorVal,
		StringVal: in.StringVal, BoolVal: in.BoolVal, Unit: in.Unit, Desc: in.Desc,
	}
}

func statValueFromProto(in *proto.StatValue) *device.StatValue {
	if in == nil {
		return nil
	}
	return &device.StatValue{
		FloatNumeratorVal: in.FloatNumerator, FloatDenominatorVal: in.FloatDenominator,
		IntNumeratorVal: in.IntNumerator, IntDenominatorVal: in.IntDenominator,
		StringVal: in.StringVal, BoolVal: in.BoolVal, Unit: in.GetUnit(), Desc: in.GetDesc(),
	}
}

func statObjectToProto(in *device.StatObject) *proto.StatObject {
	if in == nil {
		return nil
	}
	out := &proto.StatObject{}
	if in.Nested != nil {
		out.Nested = make(map[string]*proto.StatObject, len(in.Nested))
		for k, v := range in.Nested {
			out.Nested[k] = statObjectToProto(v)
		}
	}
	if in.Attributes != nil {
		out.Attributes = make(map[string]*proto.StatValue, len(in.Attributes))
		for k, v := range in.Attributes {
			out.Attributes[k] = statValueToProto(v)
		}
	}
	return out
}

func statObjectFromProto(in *proto.StatObject) *device.StatObject {
	if in == nil {
		return nil
	}
	out := &device.StatObject{}
	if in.GetNested() != nil {
		out.Nested = make(map[string]*device.StatObject, len(in.GetNested()))
		for k, v := range in.GetNested() {
			out.Nested[k] = statObjectFromProto(v)
		}
	}
	if in.GetAttributes() != nil {
		out.Attributes = make(map[string]*device.StatValue, len(in.GetAttributes()))
		for k, v := range in.GetAttributes() {
			out.Attributes[k] = statValueFromProto(v)
		}
	}
	return out
}

func statsToProto(in *device.StatsResponse) *proto.Stats {
	if in == nil {
		return nil
	}
	out := &proto.Stats{Error: grpcbase.ErrToProto(in.Error)}
	for _, g := range in.Groups {
		if g == nil {
			continue
		}
		pg := &proto.DeviceGroupStats{Vendor: g.Vendor, Type: g.Type, Name: g.Name,
			InstanceStats: make(map[string]*proto.DeviceStats, len(g.InstanceStats))}
		for id, s := range g.InstanceStats {
			if s == nil {
				continue
			}
			pg.InstanceStats[id] = &proto.DeviceStats{Summary: statValueToProto(s.Summary),
				Stats: statObjectToProto(s.Stats), Timestamp: grpcbase.TimeToProto(s.Timestamp)}
		}
		out.Groups = append(out.Groups, pg)
	}
	return out
}

func statsFromProto(in *proto.Stats) *device.StatsResponse {
	if in == nil {
		return nil
	}
	out := &device.StatsResponse{Error: grpcbase.ErrFromProto(in.Error)}
	for _, pg := range in.GetGroups() {
		g := &device.DeviceGroupStats{Vendor: pg.GetVendor(), Type: pg.GetType(), Name: pg.GetName(),
			InstanceStats: make(map[string]*device.DeviceStats, len(pg.GetInstanceStats()))}
		for id, s := range pg.GetInstanceStats() {
			if s == nil {
				continue
			}
			g.InstanceStats[id] = &device.DeviceStats{Summary: statValueFromProto(s.GetSummary()),
				Stats: statObjectFromProto(s.GetStats()), Timestamp: grpcbase.TimeFromProto(s.GetTimestamp())}
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}
