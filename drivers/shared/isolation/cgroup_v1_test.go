package isolation

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needV1 skips unless the host has usable v1 cgroups and we are root.
func needV1(t *testing.T) *CgroupLayout {
	t.Helper()
	layout := needIsolation(t)
	if layout.Version != CgroupV1 {
		t.Skip("the host uses cgroup v2; v2 is tested against a fake tree")
	}
	return layout
}

func TestCgroupV1Lifecycle(t *testing.T) {
	layout := needV1(t)
	name := fmt.Sprintf("lifecycle.%d", time.Now().UnixNano())
	cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: name, Resources: Resources{
		MemoryBytes: 32 << 20, MemoryMaxBytes: 64 << 20, CPUShares: 500, PidsMax: 50,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	defer cg.Destroy(ctx) //nolint:errcheck // checked below; this is for failures

	for ctrl, want := range map[string]string{
		"memory/memory.limit_in_bytes":      "67108864",
		"memory/memory.soft_limit_in_bytes": "33554432",
		"cpu/cpu.shares":                    "500",
		"pids/pids.max":                     "50",
	} {
		c, file, _ := strings.Cut(ctrl, "/")
		if got := readFile(t, filepath.Join(cg.Paths[c], file)); got != want {
			t.Errorf("%s = %s, want %s", ctrl, got, want)
		}
	}

	// The shell forks only once it is in the cgroup (after the line on
	// stdin), so its children and their memory are counted there.
	cmd := exec.Command("/bin/sh", "-c", "read go; head -c 8m /dev/zero > /dev/shm/drover-cgroup-test-"+name+"; sleep 60")
	gate, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer os.Remove("/dev/shm/drover-cgroup-test-" + name)
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	if err := cg.Apply(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		<-waitErr
		t.Fatal(err)
	}
	if _, err := gate.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	// Once head has written the file and sleep runs: two processes and the
	// file's memory.
	var st *Stats
	err = poll(ctx, func() (bool, error) {
		pids, err := cg.Pids()
		if err != nil {
			return false, err
		}
		if st, err = cg.Stats(); err != nil {
			return false, err
		}
		return len(pids) == 2 && st.Pids >= 2 && st.MemoryUsage >= 8<<20, nil
	})
	if err != nil {
		t.Fatalf("stats never showed the processes: %v (last %+v)", err, st)
	}
	t.Logf("stats %+v", *st)
	if oom, err := cg.OOMKilled(); err != nil || oom {
		t.Fatalf("OOMKilled = %v, %v", oom, err)
	}

	if err := cg.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waitErr; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("shell ended with %v, want killed", err)
	}
	if err := cg.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	for ctrl, dir := range cg.Paths {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s cgroup %s still there: %v", ctrl, dir, err)
		}
	}
}

func TestCgroupV1Cpuset(t *testing.T) {
	layout := needV1(t)
	if layout.Controllers["cpuset"] == "" {
		t.Skip("no cpuset controller")
	}
	cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: fmt.Sprintf("cpuset.%d", time.Now().UnixNano()), Resources: Resources{Cpuset: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := readFile(t, filepath.Join(cg.Paths["cpuset"], "cpuset.cpus")); got != "0" {
		t.Errorf("cpuset.cpus = %q, want 0", got)
	}
	if got := readFile(t, filepath.Join(cg.Paths["cpuset"], "cpuset.mems")); got == "" {
		t.Error("cpuset.mems empty: not inherited from the parent")
	}
	if err := cg.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOOMKillIsRecorded(t *testing.T) {
	layout := needIsolation(t)
	// The limit leaves room for the init stage, charged to the task's
	// cgroup until it execs the task: a -race test binary charges up to
	// 16 MiB there (and was OOM-killed itself under a 16 MiB limit).
	out, ws, cg := runIsolated(t, layout, Resources{MemoryBytes: 64 << 20},
		`head -c 512m /dev/zero | tail > /dev/null; echo "tail ended $?"`)
	oom, err := cg.OOMKilled()
	if err != nil {
		t.Fatal(err)
	}
	if !oom {
		t.Fatalf("no OOM kill recorded; task output %q, status %v", out, ws)
	}
	if !strings.Contains(out, "tail ended 137") {
		t.Errorf("output %q, want tail killed by SIGKILL", out)
	}
}
