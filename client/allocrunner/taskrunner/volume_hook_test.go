package taskrunner

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// capsDriver is a driver with fixed capabilities.
type capsDriver struct {
	*configRecorder
	caps *drivers.Capabilities
}

func (d *capsDriver) Capabilities() *drivers.Capabilities { return d.caps }

// volumeAlloc is testAlloc whose group has the host volume "v" (source
// "shared", read-only when ro) mounted by its task at /data.
func volumeAlloc(ro bool, mounts ...*structs.VolumeMount) *structs.Allocation {
	if mounts == nil {
		mounts = []*structs.VolumeMount{{Volume: "v", Destination: "/data"}}
	}
	alloc := testAlloc(structs.JobTypeBatch, &structs.Task{Config: map[string]any{"run_for": "1ms"}, VolumeMounts: mounts})
	alloc.Job.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{
		"v": {Name: "v", Type: structs.VolumeTypeHost, Source: "shared", ReadOnly: ro}}
	return alloc
}

func TestVolumeHook(t *testing.T) {
	rw := map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared"}}
	ro := map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared", ReadOnly: true}}
	cannot := &drivers.Capabilities{MountConfigs: drivers.MountConfigSupportNone}
	tests := []struct {
		name    string
		alloc   *structs.Allocation
		volumes map[string]*structs.ClientHostVolumeConfig
		caps    *drivers.Capabilities
		want    []*drivers.MountConfig
		wantErr string
	}{
		{name: "writable", alloc: volumeAlloc(false), volumes: rw,
			want: []*drivers.MountConfig{{TaskPath: "/data", HostPath: "/srv/shared"}}},
		{name: "read-only volume block", alloc: volumeAlloc(true), volumes: rw,
			want: []*drivers.MountConfig{{TaskPath: "/data", HostPath: "/srv/shared", Readonly: true}}},
		{name: "read-only on the node, asked read-only", alloc: volumeAlloc(true), volumes: ro,
			want: []*drivers.MountConfig{{TaskPath: "/data", HostPath: "/srv/shared", Readonly: true}}},
		{name: "read-only mount, twice", alloc: volumeAlloc(false,
			&structs.VolumeMount{Volume: "v", Destination: "/a", ReadOnly: true}, &structs.VolumeMount{Volume: "v", Destination: "/b"}), volumes: rw,
			want: []*drivers.MountConfig{{TaskPath: "/a", HostPath: "/srv/shared", Readonly: true}, {TaskPath: "/b", HostPath: "/srv/shared"}}},
		{name: "no mounts", alloc: testAlloc(structs.JobTypeBatch, &structs.Task{}), caps: cannot},
		{name: "host volume gone from the node", alloc: volumeAlloc(false), volumes: nil,
			wantErr: `this node has no host volume "shared" (volume "v"): add a host_volume "shared" block`},
		{name: "host volume read-only on the node, asked writable", alloc: volumeAlloc(false), volumes: ro,
			wantErr: `host volume "shared" is read-only on this node but volume "v" is not`},
		{name: "undefined volume", alloc: volumeAlloc(false, &structs.VolumeMount{Volume: "x", Destination: "/x"}), volumes: rw,
			wantErr: `volume_mount 1: group "group" has no volume "x"`},
		{name: "driver that cannot mount", alloc: volumeAlloc(false), volumes: rw, caps: cannot,
			wantErr: `driver "mock_driver" cannot mount volumes into its tasks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := tt.caps
			if caps == nil {
				caps = &drivers.Capabilities{}
			}
			h := &volumeHook{volumes: tt.volumes, driver: &capsDriver{caps: caps}}
			var resp PrestartResponse
			err := h.Prestart(context.Background(), &PrestartRequest{Alloc: tt.alloc, Task: tt.alloc.Job.TaskGroups[0].Tasks[0]}, &resp)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.Mounts, tt.want) {
				t.Errorf("mounts = %+v, want %+v", resp.Mounts, tt.want)
			}
		})
	}
}

// setHostVolumes gives the runner's volume hook the node's host volumes
// and driver.
func setHostVolumes(t *testing.T, tr *TaskRunner, volumes map[string]*structs.ClientHostVolumeConfig, d capabilityReader) {
	t.Helper()
	for _, h := range tr.prestartHooks {
		if v, ok := h.(*volumeHook); ok {
			v.volumes, v.driver = volumes, d
			return
		}
	}
	t.Fatal("no volume hook")
}

// TestTaskRunnerPassesVolumeMounts: the task's volume mounts reach the
// driver's TaskConfig.
func TestTaskRunnerPassesVolumeMounts(t *testing.T) {
	alloc := volumeAlloc(false)
	driver := &capsDriver{configRecorder: &configRecorder{failingRecover: &failingRecover{Driver: mock.New(nil)}}, caps: &drivers.Capabilities{}}
	defer driver.Shutdown()
	h := newHarness(t, alloc, driver.Driver, nil)
	h.tr.driver = driver
	setHostVolumes(t, h.tr, map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared"}}, driver)
	go h.tr.Run()
	waitClosed(t, "the task to finish", h.tr.WaitCh())
	started := driver.started()
	if len(started) != 1 {
		t.Fatalf("started %d times, want 1", len(started))
	}
	if want := []*drivers.MountConfig{{TaskPath: "/data", HostPath: "/srv/shared"}}; !reflect.DeepEqual(started[0].Mounts, want) {
		t.Errorf("mounts = %+v, want %+v", started[0].Mounts, want)
	}
}

// TestTaskRunnerRefusesMountsTheDriverCannotMake: a driver that cannot
// mount never gets the task; the task fails with the reason.
func TestTaskRunnerRefusesMountsTheDriverCannotMake(t *testing.T) {
	alloc := volumeAlloc(false)
	driver := &capsDriver{configRecorder: &configRecorder{failingRecover: &failingRecover{Driver: mock.New(nil), err: errors.New("unused")}},
		caps: &drivers.Capabilities{MountConfigs: drivers.MountConfigSupportNone}}
	defer driver.Shutdown()
	h := newHarness(t, alloc, driver.Driver, nil)
	h.tr.driver = driver
	setHostVolumes(t, h.tr, map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared"}}, driver)
	go h.tr.Run()
	waitClosed(t, "the task to fail", h.tr.WaitCh())
	if n := len(driver.started()); n != 0 {
		t.Fatalf("the driver was asked to start the task %d times", n)
	}
	st := h.tr.TaskState()
	e := findEvent(st, structs.TaskSetupFailure)
	if !st.Failed || e == nil || !strings.Contains(e.SetupError, "cannot mount volumes") {
		t.Fatalf("state = %+v, want failed with a setup failure naming the mounts", st)
	}
}
