package docker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// TestDriver_VolumesAndMounts runs a container with every kind of mount a
// job can ask for, with the default plugin config (host volumes disabled):
// host volumes the client resolved (TaskConfig.Mounts, one read-only), a
// volumes entry relative to the task dir, a named Docker volume and a
// tmpfs. The task writes through the writable ones and cannot write the
// read-only one.
func TestDriver_VolumesAndMounts(t *testing.T) {
	h := newHarness(t, nil)
	vols := t.TempDir()
	data, certs := filepath.Join(vols, "data"), filepath.Join(vols, "certs")
	for _, d := range []string{data, certs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(certs, "ca.pem"), []byte("CA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	named := fmt.Sprintf("drover-test-vol-%d-%d", os.Getpid(), allocSeq.Add(1))
	t.Cleanup(func() {
		// Named volumes outlive their containers, as in Nomad.
		_ = h.d.client.doJSON(context.Background(), http.MethodDelete, "/volumes/"+named, nil, nil, nil, true)
	})
	conf := shell(`echo written > /data/out && cat /certs/ca.pem /etc/app/app.conf &&
(touch /certs/new 2>/dev/null && echo certs-writable || echo certs-read-only) &&
echo kept > /named/f && grep -c ' /scratch tmpfs' /proc/mounts && echo ready && exec sleep 300`)
	conf.Volumes = []string{"local/conf:/etc/app:ro"}
	conf.Mounts = []MountConfig{
		{Target: "/named", Source: named}, // type "volume", the default
		{Type: "tmpfs", Target: "/scratch", TmpfsOptions: []TmpfsOptions{{Size: 1 << 20}}},
	}
	cfg := h.config(conf)
	cfg.Mounts = []*drivers.MountConfig{
		{TaskPath: "/data", HostPath: data},
		{TaskPath: "/certs", HostPath: certs, Readonly: true},
	}
	confDir := filepath.Join(cfg.TaskDir.LocalDir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "app.conf"), []byte("setting=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	if got, want := readFile(t, cfg.StdoutPath), "CA\nsetting=1\ncerts-read-only\n1\nready\n"; got != want {
		t.Fatalf("output %q, want %q (stderr %q)", got, want, readFile(t, cfg.StderrPath))
	}
	if got := readFile(t, filepath.Join(data, "out")); got != "written\n" {
		t.Errorf("host volume content = %q", got)
	}
	if _, err := os.Stat(filepath.Join(certs, "new")); err == nil {
		t.Error("the container wrote to a read-only host volume")
	}
	info := h.inspect(cfg)
	kinds := map[string]string{}
	for _, m := range info.Mounts {
		kinds[m.Destination] = string(m.Type)
		if m.Destination == "/named" && m.Name != named {
			t.Errorf("/named is volume %q, want %q", m.Name, named)
		}
		if m.Destination == "/certs" && m.RW {
			t.Error("/certs is mounted read-write")
		}
	}
	for dest, typ := range map[string]string{"/data": "bind", "/certs": "bind", "/etc/app": "bind", "/named": "volume", "/scratch": "tmpfs"} {
		if kinds[dest] != typ {
			t.Errorf("mount %s is %q, want %q (all: %v)", dest, kinds[dest], typ, kinds)
		}
	}
}
