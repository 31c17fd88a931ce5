package device

import (
	"context"
	"errors"
	"time"

	"github.com/drover-io/drover/plugins/base"
)

// APIVersion is the version of the device plugin API this SDK speaks; a
// device plugin lists it in base.PluginInfo.PluginAPIVersions.
const APIVersion = "1"

// ErrPluginUnavailable is wrapped by errors from a device plugin that runs as
// a separate process which has exited or cannot be reached.
var ErrPluginUnavailable = errors.New("device plugin unavailable")

// ErrUnknownDevice is wrapped by Reserve's error for a device ID the plugin
// does not own.
var ErrUnknownDevice = errors.New("unknown device")

// DevicePlugin is the interface of a device plugin. Every method must be safe
// for concurrent use and return promptly when its context is done.
type DevicePlugin interface {
	base.BasePlugin

	// Fingerprint streams the plugin's device groups: the first value as
	// soon as the devices are known, later ones whenever a group, an
	// instance or its health changes. Each value is the complete set of
	// groups, not a delta. The channel closes when ctx is done.
	Fingerprint(ctx context.Context) (<-chan *FingerprintResponse, error)

	// Reserve prepares the devices with the given IDs for a task and
	// returns what the task needs to use them. It fails (wrapping
	// ErrUnknownDevice) for an ID the plugin does not own.
	Reserve(ctx context.Context, deviceIDs []string) (*ContainerReservation, error)

	// Stats streams statistics of every device instance, one value per
	// interval, until ctx is done.
	Stats(ctx context.Context, interval time.Duration) (<-chan *StatsResponse, error)
}

// FingerprintResponse is one fingerprint: either the complete set of device
// groups, or an error (the plugin cannot detect its devices now).
type FingerprintResponse struct {
	Devices []*DeviceGroup
	Error   error
}

// DeviceGroup is a group of identical devices: same vendor, type and model.
type DeviceGroup struct {
	// Vendor, Type and Name identify the group ("nvidia", "gpu",
	// "Tesla T4"); a job asks for devices by "vendor/type/name".
	Vendor string
	Type   string
	Name   string
	// Devices are the group's instances.
	Devices []*Device
	// Attributes describe the model ("memory" = 16 GiB); constraints
	// and affinities in job files refer to them.
	Attributes map[string]*Attribute
}

// Device is one device instance.
type Device struct {
	// ID is unique among the plugin's devices (a GPU's UUID).
	ID string
	// Healthy says whether the instance can be given to a task;
	// HealthDesc says why not.
	Healthy    bool
	HealthDesc string
	// HwLocality is where the instance sits; nil: unknown.
	HwLocality *DeviceLocality
}

// DeviceLocality is where a device sits in the hardware.
type DeviceLocality struct {
	// PciBusID is the device's PCI bus ID ("0000:3b:00.0").
	PciBusID string
}

// ContainerReservation is what a task needs to use the devices reserved for
// it; every field may be empty.
type ContainerReservation struct {
	// Envs are environment variables to set in the task.
	Envs map[string]string
	// Mounts are host paths to mount into the task.
	Mounts []*Mount
	// Devices are device nodes to expose to the task.
	Devices []*DeviceSpec
}

// Mount is a host path mounted into a task.
type Mount struct {
	TaskPath string
	HostPath string
	ReadOnly bool
}

// DeviceSpec is a device node exposed to a task.
type DeviceSpec struct {
	// TaskPath is the node's path in the task; HostPath on the host.
	TaskPath string
	HostPath string
	// CgroupPerms are the cgroup permissions: a combination of "r", "w"
	// and "m"; empty means "rwm".
	CgroupPerms string
}

// StatsResponse is one round of statistics: per group, per instance; or an
// error (the plugin cannot collect statistics now).
type StatsResponse struct {
	Groups []*DeviceGroupStats
	Error  error
}
