package docker

import (
	"fmt"
	"path"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/drover-io/drover/plugins/drivers"
)

// taskDevices checks the task's devices as Nomad's driver does: host_path
// is required, container_path defaults to it, and cgroup_permissions
// ("rwm" by default) combine r, w and m.
func taskDevices(devs []DeviceConfig) ([]container.DeviceMapping, error) {
	var out []container.DeviceMapping
	for i, d := range devs {
		if d.HostPath == "" {
			return nil, fmt.Errorf("devices[%d]: host_path is required", i)
		}
		dm := container.DeviceMapping{PathOnHost: d.HostPath, PathInContainer: d.ContainerPath, CgroupPermissions: d.CgroupPermissions}
		if dm.PathInContainer == "" {
			dm.PathInContainer = d.HostPath
		}
		if !path.IsAbs(dm.PathOnHost) || !path.IsAbs(dm.PathInContainer) {
			return nil, fmt.Errorf("devices[%d]: host_path and container_path must be absolute", i)
		}
		if dm.CgroupPermissions == "" {
			dm.CgroupPermissions = "rwm"
		}
		if strings.Trim(dm.CgroupPermissions, "rwm") != "" {
			return nil, fmt.Errorf("devices[%d]: cgroup_permissions %q: use r, w and m", i, d.CgroupPermissions)
		}
		out = append(out, dm)
	}
	return out, nil
}

// applyDeviceReservations exposes the device nodes and mounts the task's
// device plugins asked for (TaskConfig.Devices and Mounts); their
// environment variables are already in the task's environment.
func applyDeviceReservations(hc *container.HostConfig, cfg *drivers.TaskConfig) {
	for _, d := range cfg.Devices {
		perms := d.Permissions
		if perms == "" {
			perms = "rwm"
		}
		hc.Devices = append(hc.Devices, container.DeviceMapping{PathOnHost: d.HostPath, PathInContainer: d.TaskPath, CgroupPermissions: perms})
	}
	for _, m := range cfg.Mounts {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.Readonly})
	}
}
