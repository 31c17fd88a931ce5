package exec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

func TestDeviceMountsAndNodes(t *testing.T) {
	cfg := &drivers.TaskConfig{
		Devices: []*drivers.DeviceConfig{{TaskPath: "/dev/fake0", HostPath: "/dev/null", Permissions: "rw"}, {TaskPath: "/dev/ro", HostPath: "/dev/zero", Permissions: "r"}},
		Mounts:  []*drivers.MountConfig{{TaskPath: "/opt/lib", HostPath: "/usr/lib", Readonly: true}},
	}
	if got, want := taskMounts(cfg), []isolation.Mount{{Source: "/usr/lib", Target: "/opt/lib", ReadOnly: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("mounts = %+v", got)
	}
	want := []isolation.Mount{{Source: "/dev/null", Target: "/dev/fake0"}, {Source: "/dev/zero", Target: "/dev/ro", ReadOnly: true}}
	if got := deviceNodes(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("devices = %+v", got)
	}
}

// TestDeviceReservationInTask runs a task given a device node and a mount
// by its device plugins: both are there, inside the task's root.
func TestDeviceReservationInTask(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "lib.so"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := h.sh(`test -c /dev/fake0 && echo node; cat /opt/fakelib/lib.so; touch /opt/fakelib/y 2>/dev/null || echo read-only`)
	cfg.Devices = []*drivers.DeviceConfig{{TaskPath: "/dev/fake0", HostPath: "/dev/null", Permissions: "rw"}}
	cfg.Mounts = []*drivers.MountConfig{{TaskPath: "/opt/fakelib", HostPath: src, Readonly: true}}
	h.start(cfg)
	res := h.wait(cfg.ID)
	if !res.Successful() {
		t.Fatalf("exit %+v; stderr %q", res, stderr(t, cfg))
	}
	if got := strings.TrimSpace(stdout(t, cfg)); got != "node\nxread-only" {
		t.Fatalf("stdout %q (stderr %q)", got, stderr(t, cfg))
	}
}
