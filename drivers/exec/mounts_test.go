package exec

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

func TestTaskMountsOrder(t *testing.T) {
	cfg := &drivers.TaskConfig{Mounts: []*drivers.MountConfig{
		{TaskPath: "/data/cache/", HostPath: "/c"},
		nil,
		{TaskPath: "/data", HostPath: "/d", Readonly: true},
		{TaskPath: "/a/b", HostPath: "/ab"},
		{TaskPath: "/x", HostPath: "/x"},
	}}
	want := []isolation.Mount{
		{Source: "/d", Target: "/data", ReadOnly: true},
		{Source: "/x", Target: "/x"},
		{Source: "/c", Target: "/data/cache/"},
		{Source: "/ab", Target: "/a/b"},
	}
	if got := taskMounts(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("taskMounts = %+v, want %+v", got, want)
	}
}

// mountPoints returns the mount points listed in a mountinfo file.
func mountPoints(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 {
			out = append(out, fields[4])
		}
	}
	return out
}

// hostMountsUnder returns the host's mount points at or below dir.
func hostMountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range mountPoints(t, "/proc/self/mountinfo") {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// TestVolumeMountsInTask runs a task with a writable volume, a volume
// below it (listed first), and a read-only one: the task writes through
// the writable ones to the host directories, cannot write the read-only
// one, and the mounts exist only in the task's mount namespace: the host
// never sees them, and nothing remains once the task is stopped.
func TestVolumeMountsInTask(t *testing.T) {
	h := newHarness(t)
	vols := t.TempDir()
	data, cache, conf := filepath.Join(vols, "data"), filepath.Join(vols, "cache"), filepath.Join(vols, "conf")
	for _, d := range []string{data, cache, conf} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil { // the task runs as nobody
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "app.conf"), []byte("setting=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := h.sh(`echo written > /data/out && echo cached > /data/cache/c && cat /conf/app.conf &&
(touch /conf/new 2>/dev/null && echo conf-writable || echo conf-read-only) && echo ready > /data/ready && exec sleep 300`)
	cfg.Mounts = []*drivers.MountConfig{
		{TaskPath: "/data/cache", HostPath: cache},
		{TaskPath: "/data", HostPath: data},
		{TaskPath: "/conf", HostPath: conf, Readonly: true},
	}
	th := h.start(cfg)
	pid := handleState(t, th).Isolation.Pid
	testwait.Exists(t, "the task to write through its volume", filepath.Join(data, "ready"))
	// The shim copies the output to the log file on its own schedule.
	testwait.FileContains(t, "the task's output", cfg.StdoutPath, "conf-")
	if got := strings.TrimSpace(stdout(t, cfg)); got != "setting=1\nconf-read-only" {
		t.Fatalf("stdout %q, stderr %q", got, stderr(t, cfg))
	}
	for path, want := range map[string]string{filepath.Join(data, "out"): "written\n", filepath.Join(cache, "c"): "cached\n"} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "cache", "c")); err == nil {
		t.Error("the cache volume was mounted before /data and hidden by it: its file landed in the data volume")
	}
	if _, err := os.Stat(filepath.Join(conf, "new")); err == nil {
		t.Error("the task wrote to a read-only volume")
	}
	inTask := mountPoints(t, fmt.Sprintf("/proc/%d/mountinfo", pid))
	for _, want := range []string{"/data", "/data/cache", "/conf"} {
		found := false
		for _, p := range inTask {
			found = found || p == want
		}
		if !found {
			t.Errorf("the task's mount namespace lacks %s: %q", want, inTask)
		}
	}
	if got := hostMountsUnder(t, cfg.TaskDir.Dir); len(got) > 0 {
		t.Errorf("the host sees the task's mounts: %q", got)
	}

	if err := h.d.StopTask(context.Background(), cfg.ID, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	h.wait(cfg.ID)
	testwait.Exit(t, "the task's processes gone", pid, nil)
	if got := hostMountsUnder(t, cfg.TaskDir.Dir); len(got) > 0 {
		t.Errorf("mounts left behind after the task stopped: %q", got)
	}
	// The mount points are plain, empty directories of the task dir: the
	// alloc dir's removal cannot reach the volumes' contents.
	entries, err := os.ReadDir(filepath.Join(cfg.TaskDir.Dir, "data"))
	if err != nil || len(entries) != 0 {
		t.Errorf("mount point in the task dir: %v entries, %v; want an empty directory", len(entries), err)
	}
	if _, err := os.Stat(filepath.Join(data, "out")); err != nil {
		t.Errorf("the volume's content is gone after the task stopped: %v", err)
	}
}

// TestVolumeMountMissingSource: a host path that vanished fails the start
// with an error naming it, and leaves no mount behind.
func TestVolumeMountMissingSource(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh("true")
	missing := filepath.Join(t.TempDir(), "gone")
	cfg.Mounts = []*drivers.MountConfig{{TaskPath: "/data", HostPath: missing}}
	_, err := h.d.StartTask(context.Background(), cfg)
	if err == nil {
		_ = h.d.DestroyTask(context.Background(), cfg.ID, true)
		t.Fatal("StartTask succeeded with a missing mount source")
	}
	if !strings.Contains(err.Error(), missing) {
		t.Errorf("error %q does not name %s", err, missing)
	}
	if got := hostMountsUnder(t, cfg.TaskDir.Dir); len(got) > 0 {
		t.Errorf("mounts left behind: %q", got)
	}
}
