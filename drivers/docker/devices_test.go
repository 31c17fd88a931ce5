package docker

import (
	"reflect"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestApplyDeviceReservations(t *testing.T) {
	hc := &hostConfig{}
	applyDeviceReservations(hc, &drivers.TaskConfig{
		Devices: []*drivers.DeviceConfig{{TaskPath: "/dev/nvidia0", HostPath: "/dev/nvidia0"}, {TaskPath: "/dev/x", HostPath: "/dev/y", Permissions: "r"}},
		Mounts:  []*drivers.MountConfig{{TaskPath: "/usr/lib/nv", HostPath: "/opt/nv", Readonly: true}},
	})
	wantDev := []deviceMapping{{"/dev/nvidia0", "/dev/nvidia0", "rwm"}, {"/dev/y", "/dev/x", "r"}}
	wantMount := []mount{{Type: "bind", Source: "/opt/nv", Target: "/usr/lib/nv", ReadOnly: true}}
	if !reflect.DeepEqual(hc.Devices, wantDev) || !reflect.DeepEqual(hc.Mounts, wantMount) {
		t.Fatalf("devices %+v mounts %+v", hc.Devices, hc.Mounts)
	}
}
