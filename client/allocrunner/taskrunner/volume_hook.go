package taskrunner

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

var _ prestartHook = (*volumeHook)(nil)

// capabilityReader is what the volume hook needs of the task's driver.
type capabilityReader interface {
	Capabilities() *drivers.Capabilities
}

// volumeHook turns the task's volume_mount blocks into the driver's
// mounts (TaskConfig.Mounts): each names one of the group's volume
// blocks, whose source is one of the node's host volumes. The mount is
// read-only when the host volume, the group's volume or the mount says
// so. It runs before every start (it saves nothing): a host volume
// removed from the agent's config since the allocation was placed fails
// the task with an error naming it, and so does a driver that declares it
// cannot mount (the servers refuse such jobs; this is the last guard, so
// that a mount is never silently dropped).
type volumeHook struct {
	// volumes are the node's host volumes (Node.HostVolumes).
	volumes map[string]*structs.ClientHostVolumeConfig
	driver  capabilityReader
}

// Name returns "volumes".
func (*volumeHook) Name() string { return "volumes" }

// Prestart adds the task's volume mounts to resp.Mounts.
func (h *volumeHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	ms := req.Task.VolumeMounts
	if len(ms) == 0 {
		return nil
	}
	if h.driver != nil {
		if caps := h.driver.Capabilities(); caps != nil && caps.MountConfigs == drivers.MountConfigSupportNone {
			return fmt.Errorf("driver %q cannot mount volumes into its tasks: remove the task's volume_mount blocks or use a driver that can, such as exec or docker", req.Task.Driver)
		}
	}
	var tg *structs.TaskGroup
	if req.Alloc.Job != nil {
		tg = req.Alloc.Job.LookupTaskGroup(req.Alloc.TaskGroup)
	}
	if tg == nil {
		return fmt.Errorf("the allocation's job has no group %q to find the task's volumes in", req.Alloc.TaskGroup)
	}
	for i, m := range ms {
		if m == nil {
			continue
		}
		vol := tg.Volumes[m.Volume]
		if vol == nil {
			return fmt.Errorf("volume_mount %d: group %q has no volume %q", i+1, tg.Name, m.Volume)
		}
		if vol.Type != structs.VolumeTypeHost {
			return fmt.Errorf("volume_mount %d: volume %q is of type %q; this client mounts host volumes only", i+1, m.Volume, vol.Type)
		}
		hv := h.volumes[vol.Source]
		if hv == nil {
			return fmt.Errorf("volume_mount %d: this node has no host volume %q (volume %q): add a host_volume %q block to the agent's client config, or let the job be placed elsewhere",
				i+1, vol.Source, m.Volume, vol.Source)
		}
		if hv.ReadOnly && !vol.ReadOnly {
			return fmt.Errorf("volume_mount %d: host volume %q is read-only on this node but volume %q is not: set read_only = true in the group's volume block",
				i+1, vol.Source, m.Volume)
		}
		resp.Mounts = append(resp.Mounts, &drivers.MountConfig{
			TaskPath: m.Destination,
			HostPath: hv.Path,
			Readonly: structs.MountReadOnly(hv, vol, m),
		})
	}
	return nil
}

// nodeHostVolumes returns the node's host volumes; nil without a node.
func nodeHostVolumes(n *structs.Node) map[string]*structs.ClientHostVolumeConfig {
	if n == nil {
		return nil
	}
	return n.HostVolumes
}
