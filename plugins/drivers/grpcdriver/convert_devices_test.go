package grpcdriver

import (
	"reflect"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestTaskConfigDevicesRoundTrip(t *testing.T) {
	for _, in := range []*drivers.TaskConfig{
		{ID: "a/t/1"},
		{ID: "a/t/2",
			Devices: []*drivers.DeviceConfig{{TaskPath: "/dev/nvidia0", HostPath: "/dev/nvidia0", Permissions: "rw"}},
			Mounts:  []*drivers.MountConfig{{TaskPath: "/usr/lib/x", HostPath: "/opt/x", Readonly: true}}},
	} {
		out := taskConfigFromProto(taskConfigToProto(in))
		if !reflect.DeepEqual(out.Devices, in.Devices) || !reflect.DeepEqual(out.Mounts, in.Mounts) {
			t.Errorf("%s: devices %+v mounts %+v, want %+v %+v", in.ID, out.Devices, out.Mounts, in.Devices, in.Mounts)
		}
	}
}
