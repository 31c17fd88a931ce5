package docker

import (
	"reflect"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestApplyDeviceReservations(t *testing.T) {
	hc := &container.HostConfig{}
	applyDeviceReservations(hc, &drivers.TaskConfig{
		Devices: []*drivers.DeviceConfig{{TaskPath: "/dev/nvidia0", HostPath: "/dev/nvidia0"}, {TaskPath: "/dev/x", HostPath: "/dev/y", Permissions: "r"}},
		Mounts:  []*drivers.MountConfig{{TaskPath: "/usr/lib/nv", HostPath: "/opt/nv", Readonly: true}},
	})
	wantDev := []container.DeviceMapping{{PathOnHost: "/dev/nvidia0", PathInContainer: "/dev/nvidia0", CgroupPermissions: "rwm"}, {PathOnHost: "/dev/y", PathInContainer: "/dev/x", CgroupPermissions: "r"}}
	wantMount := []mount.Mount{{Type: "bind", Source: "/opt/nv", Target: "/usr/lib/nv", ReadOnly: true}}
	if !reflect.DeepEqual(hc.Devices, wantDev) || !reflect.DeepEqual(hc.Mounts, wantMount) {
		t.Fatalf("devices %+v mounts %+v", hc.Devices, hc.Mounts)
	}
}

// TestTaskDevices: the task's devices are checked as Nomad's driver does.
func TestTaskDevices(t *testing.T) {
	cases := []struct {
		name    string
		in      []DeviceConfig
		want    []container.DeviceMapping
		wantErr string
	}{
		{"defaults", []DeviceConfig{{HostPath: "/dev/fuse"}}, []container.DeviceMapping{{PathOnHost: "/dev/fuse", PathInContainer: "/dev/fuse", CgroupPermissions: "rwm"}}, ""},
		{"all fields", []DeviceConfig{{HostPath: "/dev/sda1", ContainerPath: "/dev/xvdc", CgroupPermissions: "r"}}, []container.DeviceMapping{{PathOnHost: "/dev/sda1", PathInContainer: "/dev/xvdc", CgroupPermissions: "r"}}, ""},
		{"no host path", []DeviceConfig{{ContainerPath: "/dev/x"}}, nil, "host_path is required"},
		{"bad permissions", []DeviceConfig{{HostPath: "/dev/fuse", CgroupPermissions: "rwx"}}, nil, `cgroup_permissions "rwx"`},
		{"relative path", []DeviceConfig{{HostPath: "dev/fuse"}}, nil, "must be absolute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskDevices(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("taskDevices = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
