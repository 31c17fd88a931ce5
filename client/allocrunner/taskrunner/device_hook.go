package taskrunner

import (
	"context"
	"fmt"
	"maps"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

var _ prestartHook = (*deviceHook)(nil)

// DeviceReserver reserves device instances for a task: the client's device
// manager implements it.
type DeviceReserver interface {
	Reserve(ctx context.Context, req *structs.AllocatedDeviceResource) (*device.ContainerReservation, error)
}

// deviceHook reserves the device instances the scheduler gave the task,
// before every start, and hands the task what the device plugins asked
// for: environment variables, mounts and device nodes.
type deviceHook struct {
	reserver DeviceReserver
}

// Name returns "devices".
func (*deviceHook) Name() string { return "devices" }

// Prestart reserves the task's devices; a task with none is left alone.
func (h *deviceHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	var devs []*structs.AllocatedDeviceResource
	if ar := req.Alloc.AllocatedResources; ar != nil {
		if tr := ar.Tasks[req.Task.Name]; tr != nil {
			devs = tr.Devices
		}
	}
	if len(devs) == 0 {
		return nil
	}
	if h.reserver == nil {
		return fmt.Errorf("task was given devices %s but this client has no device manager", devs[0].ID())
	}
	for _, d := range devs {
		r, err := h.reserver.Reserve(ctx, d)
		if err != nil {
			return fmt.Errorf("reserve devices %s %v: %w", d.ID(), d.DeviceIDs, err)
		}
		if len(r.Envs) > 0 {
			if resp.Env == nil {
				resp.Env = make(map[string]string, len(r.Envs))
			}
			maps.Copy(resp.Env, r.Envs)
		}
		for _, m := range r.Mounts {
			resp.Mounts = append(resp.Mounts, &drivers.MountConfig{TaskPath: m.TaskPath, HostPath: m.HostPath, Readonly: m.ReadOnly})
		}
		for _, n := range r.Devices {
			resp.Devices = append(resp.Devices, &drivers.DeviceConfig{TaskPath: n.TaskPath, HostPath: n.HostPath, Permissions: n.CgroupPerms})
		}
	}
	return nil
}
