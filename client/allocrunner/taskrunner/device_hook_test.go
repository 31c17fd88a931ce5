package taskrunner

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

type fakeReserver struct {
	mu    sync.Mutex // guards calls
	calls []string
	fail  error
}

// callCount returns how many times Reserve was called.
func (f *fakeReserver) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeReserver) Reserve(_ context.Context, req *structs.AllocatedDeviceResource) (*device.ContainerReservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req.ID().String()+strings.Join(req.DeviceIDs, ","))
	if f.fail != nil {
		return nil, f.fail
	}
	return &device.ContainerReservation{
		Envs:    map[string]string{"FAKE_VISIBLE_DEVICES": strings.Join(req.DeviceIDs, ",")},
		Mounts:  []*device.Mount{{TaskPath: "/t", HostPath: "/h", ReadOnly: true}},
		Devices: []*device.DeviceSpec{{TaskPath: "/dev/f", HostPath: "/dev/f0", CgroupPerms: "rw"}},
	}, nil
}

func deviceAlloc(devs ...*structs.AllocatedDeviceResource) *structs.Allocation {
	return &structs.Allocation{ID: "a1", AllocatedResources: &structs.AllocatedResources{
		Tasks: map[string]*structs.AllocatedTaskResources{"web": {Devices: devs}}}}
}

func TestDeviceHook(t *testing.T) {
	gpu := &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"fake-1"}}
	tests := []struct {
		name      string
		alloc     *structs.Allocation
		reserver  *fakeReserver
		wantCalls []string
		wantEnv   map[string]string
		wantErr   string
	}{
		{name: "no devices", alloc: deviceAlloc(), reserver: &fakeReserver{}},
		{name: "no allocated resources", alloc: &structs.Allocation{ID: "a1"}, reserver: &fakeReserver{}},
		{name: "reserved", alloc: deviceAlloc(gpu), reserver: &fakeReserver{},
			wantCalls: []string{"drover/gpu/fakefake-1"}, wantEnv: map[string]string{"FAKE_VISIBLE_DEVICES": "fake-1"}},
		{name: "plugin refuses", alloc: deviceAlloc(gpu), reserver: &fakeReserver{fail: errors.New("device plugin restarting")},
			wantCalls: []string{"drover/gpu/fakefake-1"}, wantErr: "reserve devices drover/gpu/fake [fake-1]: device plugin restarting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &deviceHook{reserver: tt.reserver}
			var resp PrestartResponse
			err := h.Prestart(context.Background(), &PrestartRequest{Alloc: tt.alloc, Task: &structs.Task{Name: "web"}}, &resp)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.reserver.calls, tt.wantCalls) || !reflect.DeepEqual(resp.Env, tt.wantEnv) {
				t.Fatalf("calls %v env %v", tt.reserver.calls, resp.Env)
			}
			if tt.wantEnv != nil && (!reflect.DeepEqual(resp.Mounts, []*drivers.MountConfig{{TaskPath: "/t", HostPath: "/h", Readonly: true}}) ||
				!reflect.DeepEqual(resp.Devices, []*drivers.DeviceConfig{{TaskPath: "/dev/f", HostPath: "/dev/f0", Permissions: "rw"}})) {
				t.Fatalf("mounts %+v devices %+v", resp.Mounts, resp.Devices)
			}
		})
	}
	t.Run("no device manager", func(t *testing.T) {
		err := (&deviceHook{}).Prestart(context.Background(), &PrestartRequest{Alloc: deviceAlloc(gpu), Task: &structs.Task{Name: "web"}}, &PrestartResponse{})
		if err == nil || !strings.Contains(err.Error(), "no device manager") {
			t.Fatalf("err = %v", err)
		}
	})
}
