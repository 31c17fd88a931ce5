package taskrunner

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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

// deviceReservationsKey is the key of the device hook's saved state: the
// JSON of its []savedReservation.
const deviceReservationsKey = "reservations"

// savedReservation is one reservation the device hook got and saved: the
// devices it was for and what the device plugin asked for.
type savedReservation struct {
	Vendor, Type, Name string
	DeviceIDs          []string
	Reservation        *device.ContainerReservation
}

// deviceHook reserves the device instances the scheduler gave the task
// and hands the task what the device plugins asked for: environment
// variables, mounts and device nodes. It reserves once: the reservations
// are saved in its hook state, and later starts of the task, in this agent
// or in a restarted one, re-use them as long as the task is given the
// same device instances.
type deviceHook struct {
	reserver DeviceReserver
}

// Name returns "devices".
func (*deviceHook) Name() string { return "devices" }

// Prestart reserves the task's devices, or re-uses the saved
// reservations; a task with none is left alone.
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
	saved, ok := savedReservations(req.PreviousState, devs)
	if !ok {
		if h.reserver == nil {
			return fmt.Errorf("task was given devices %s but this client has no device manager", devs[0].ID())
		}
		var err error
		if saved, err = h.reserve(ctx, devs); err != nil {
			return err
		}
		data, err := json.Marshal(saved)
		if err != nil {
			return fmt.Errorf("save device reservations: %w", err)
		}
		resp.State = map[string]string{deviceReservationsKey: string(data)}
	}
	for _, s := range saved {
		r := s.Reservation
		if r == nil {
			continue
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

// reserve asks the device manager for a reservation of each device group.
func (h *deviceHook) reserve(ctx context.Context, devs []*structs.AllocatedDeviceResource) ([]savedReservation, error) {
	out := make([]savedReservation, 0, len(devs))
	for _, d := range devs {
		r, err := h.reserver.Reserve(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("reserve devices %s %v: %w", d.ID(), d.DeviceIDs, err)
		}
		out = append(out, savedReservation{Vendor: d.Vendor, Type: d.Type, Name: d.Name,
			DeviceIDs: slices.Clone(d.DeviceIDs), Reservation: r})
	}
	return out, nil
}

// savedReservations decodes the hook's saved state and reports whether it
// holds reservations of exactly the devices devs, in order. State that
// does not decode (or another hook version's) is not re-used.
func savedReservations(prev map[string]string, devs []*structs.AllocatedDeviceResource) ([]savedReservation, bool) {
	raw, ok := prev[deviceReservationsKey]
	if !ok {
		return nil, false
	}
	var saved []savedReservation
	if err := json.Unmarshal([]byte(raw), &saved); err != nil || len(saved) != len(devs) {
		return nil, false
	}
	for i, d := range devs {
		s := saved[i]
		if s.Vendor != d.Vendor || s.Type != d.Type || s.Name != d.Name || !slices.Equal(s.DeviceIDs, d.DeviceIDs) {
			return nil, false
		}
	}
	return saved, true
}
