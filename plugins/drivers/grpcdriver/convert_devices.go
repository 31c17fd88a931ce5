package grpcdriver

import (
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

func devicesToProto(in []*drivers.DeviceConfig) []*proto.DeviceConfig {
	var out []*proto.DeviceConfig
	for _, d := range in {
		if d != nil {
			out = append(out, &proto.DeviceConfig{TaskPath: d.TaskPath, HostPath: d.HostPath, Permissions: d.Permissions})
		}
	}
	return out
}

func devicesFromProto(in []*proto.DeviceConfig) []*drivers.DeviceConfig {
	var out []*drivers.DeviceConfig
	for _, d := range in {
		out = append(out, &drivers.DeviceConfig{TaskPath: d.GetTaskPath(), HostPath: d.GetHostPath(), Permissions: d.GetPermissions()})
	}
	return out
}

func mountsToProto(in []*drivers.MountConfig) []*proto.MountConfig {
	var out []*proto.MountConfig
	for _, m := range in {
		if m != nil {
			out = append(out, &proto.MountConfig{TaskPath: m.TaskPath, HostPath: m.HostPath, Readonly: m.Readonly})
		}
	}
	return out
}

func mountsFromProto(in []*proto.MountConfig) []*drivers.MountConfig {
	var out []*drivers.MountConfig
	for _, m := range in {
		out = append(out, &drivers.MountConfig{TaskPath: m.GetTaskPath(), HostPath: m.GetHostPath(), Readonly: m.GetReadonly()})
	}
	return out
}
