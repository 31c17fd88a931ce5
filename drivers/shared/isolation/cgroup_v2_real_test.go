package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestV2LaunchOnRealHierarchy starts a task in a real cgroup2 cgroup,
// without controllers (on a hybrid host they belong to v1): it checks the
// parts of the v2 path that do not need them — clone3 into the cgroup,
// cgroup.procs, cgroup.kill and removal.
func TestV2LaunchOnRealHierarchy(t *testing.T) {
	needIsolation(t)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := parseMountinfo(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var root string
	for _, m := range mounts {
		if m.FSType == "cgroup2" {
			root = m.Point
			break
		}
	}
	if root == "" {
		t.Skip("no cgroup2 hierarchy mounted")
	}
	parent := filepath.Join(root, testParent+"-v2")
	dir := filepath.Join(parent, fmt.Sprintf("launch.%d", time.Now().UnixNano()))
	if err := mkdirAll(realFS{}, root, dir, nil); err != nil {
		t.Skipf("cannot create a cgroup2 cgroup: %v", err)
	}
	defer os.Remove(parent) //nolint:errcheck // best effort: shared by parallel runs
	cg := &Cgroup{Version: CgroupV2, Path: dir}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer func() {
		if err := cg.Destroy(ctx); err != nil {
			t.Errorf("Destroy: %v", err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s still there: %v", dir, err)
		}
	}()

	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p, err := Start(ctx, testInit(t), &Spec{
		Path: "/bin/sh", Args: []string{"-c", "grep '^0::' /proc/self/cgroup; echo ready; exec sleep 1000"},
		RootDir: taskRoot(t), Mounts: ChrootMounts(DefaultChrootEnv()),
	}, cg, out, out)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := p.Wait()
		waited <- err
	}()
	err = poll(ctx, func() (bool, error) {
		b, err := os.ReadFile(out.Name())
		return strings.Contains(string(b), "ready"), err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.Name())
	rel := strings.TrimPrefix(dir, root)
	if !strings.Contains(string(b), "0::"+rel+"\n") {
		t.Fatalf("task's cgroup: %q, want it in %s from its first instruction", b, rel)
	}
	pids, err := cg.Pids()
	if err != nil || len(pids) != 1 || pids[0] != p.Pid {
		t.Fatalf("Pids = %v, %v; want [%d]", pids, err, p.Pid)
	}
	var entered strings.Builder
	ps, err := Enter(ctx, testInit(t), p.State, &EnterSpec{Path: "/bin/grep", Args: []string{"^0::", "/proc/self/cgroup"}}, &entered, &entered)
	if err != nil || ps.ExitCode() != 0 || entered.String() != "0::"+rel+"\n" {
		t.Fatalf("Enter: %v, %v, output %q; want the command in %s", ps, err, entered.String(), rel)
	}
	if err := cg.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("task ended with %v, want killed", err)
	}
}
