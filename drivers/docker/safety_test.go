package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSafeDefaults_HostPaths: with the default plugin config a task cannot
// bind host paths outside its allocation (issue 19: "/:/host" gave a
// container root on the host); the error names the plugin option.
func TestSafeDefaults_HostPaths(t *testing.T) {
	cases := []struct {
		name string
		raw  string
	}{
		{"host root volume", `{"image":"busybox","volumes":["/:/host"]}`},
		{"absolute volume", `{"image":"busybox","volumes":["/etc:/etc2:ro"]}`},
		{"relative volume leaving the alloc", `{"image":"busybox","volumes":["../../../../etc:/etc2"]}`},
		{"bind mount of the host root", `{"image":"busybox","mount":[{"type":"bind","source":"/","target":"/host"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specConfig(tc.raw)
			env := containerEnv(cfg.Env)
			conf, err := decodeTaskConfig(cfg, env)
			if err == nil {
				_, err = buildSpec(cfg, conf, env, specInput{plugin: DefaultConfig(), cpuMHz: 1000})
			}
			if err == nil || !strings.Contains(err.Error(), "volumes { enabled = true }") {
				t.Fatalf("err = %v, want a refusal naming volumes { enabled = true }", err)
			}
		})
	}
}

// TestSafeDefaults_HostRootVolumeRefused runs the exploit against
// the real daemon: the task must not start.
func TestSafeDefaults_HostRootVolumeRefused(t *testing.T) {
	h := newHarness(t, nil)
	conf := shell("ls /host")
	conf.Volumes = []string{"/:/host"}
	cfg := h.config(conf)
	_, err := h.d.StartTask(context.Background(), cfg)
	if err == nil {
		_ = h.d.DestroyTask(context.Background(), cfg.ID, true)
		t.Fatal("a task mounted the host's root with the default plugin config")
	}
	if !strings.Contains(err.Error(), "volumes { enabled = true }") {
		t.Fatalf("err = %v, want it to name volumes { enabled = true }", err)
	}
}

// TestSafeDefaults_PlantedSymlink: a task can create symbolic links in its
// directories (they are mounted into the container); a later volume
// through such a link must not reach the host outside the allocation.
func TestSafeDefaults_PlantedSymlink(t *testing.T) {
	alloc := t.TempDir()
	taskDir := filepath.Join(alloc, "web")
	local := filepath.Join(taskDir, "local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(local, "root")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("local", filepath.Join(taskDir, "inside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/drover-test-missing", filepath.Join(local, "dangling")); err != nil {
		t.Fatal(err)
	}
	h := hostPaths{taskDir: taskDir, allocDir: alloc}
	if _, err := h.volume("local/root:/host"); err == nil || !strings.Contains(err.Error(), "volumes { enabled = true }") {
		t.Fatalf("volume through a planted link to / = %v, want a refusal", err)
	}
	if _, err := h.volume("local/root/etc:/etc2"); err == nil {
		t.Fatal("volume below a planted link to / accepted")
	}
	// The daemon would create the missing target of a dangling link.
	if _, err := h.volume("local/dangling/x:/x"); err == nil || !strings.Contains(err.Error(), "symbolic link to a missing target") {
		t.Fatalf("volume through a dangling link = %v, want a refusal", err)
	}
	got, err := h.volume("inside/new:/data")
	if err != nil {
		t.Fatal(err)
	}
	realLocal, _ := filepath.EvalSymlinks(local)
	if want := filepath.Join(realLocal, "new") + ":/data"; got != want {
		t.Fatalf("volume through a link inside the alloc = %q, want the resolved %q", got, want)
	}
}
