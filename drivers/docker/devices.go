package docker

import "github.com/drover-io/drover/plugins/drivers"

// deviceMapping is one entry of HostConfig.Devices.
type deviceMapping struct {
	PathOnHost        string `json:"PathOnHost"`
	PathInContainer   string `json:"PathInContainer"`
	CgroupPermissions string `json:"CgroupPermissions"`
}

// applyDeviceReservations exposes the device nodes and mounts the task's
// device plugins asked for (TaskConfig.Devices and Mounts); their
// environment variables are already in the task's environment.
func applyDeviceReservations(hc *hostConfig, cfg *drivers.TaskConfig) {
	for _, d := range cfg.Devices {
		perms := d.Permissions
		if perms == "" {
			perms = "rwm"
		}
		hc.Devices = append(hc.Devices, deviceMapping{PathOnHost: d.HostPath, PathInContainer: d.TaskPath, CgroupPermissions: perms})
	}
	for _, m := range cfg.Mounts {
		hc.Mounts = append(hc.Mounts, mount{Type: "bind", Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.Readonly})
	}
}
