package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEnterStartIsolation checks everything the enter stage applies to a
// command EnterStart runs (alloc exec's path), as the command itself sees
// it in /proc/self/status and /proc/self/ns: the user's IDs in every one
// of real, effective, saved and filesystem (the stage sets them on its
// own thread only, then execve's from it), the capability bounding and
// effective sets, no_new_privs and the seccomp filter, and the task's
// ipc, uts, network and pid namespaces; and that the test process's own
// namespaces are unchanged after the execs.
func TestEnterStartIsolation(t *testing.T) {
	layout := needIsolation(t)
	uid, gid, groups, err := LookupUser(DefaultUser)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: fmt.Sprintf("enterstart.%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer func() {
		if err := cg.Destroy(ctx); err != nil {
			t.Errorf("destroy cgroup: %v", err)
		}
	}()
	// Root in the task, in a network namespace of its own.
	p, err := Start(ctx, testInit(t), &Spec{
		Path: "/bin/sh", Args: []string{"-c", "exec sleep 1000"},
		Env: []string{"PATH=/usr/bin:/bin"}, RootDir: taskRoot(t), Mounts: ChrootMounts(DefaultChrootEnv()),
		Hostname: "entered", NetworkIsolation: true,
	}, cg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		_, _ = p.Wait()
	}()
	defer func() { <-waited }()
	defer func() { _ = cg.Kill(ctx) }()

	// The process's own namespaces (its main thread's, /proc/self/ns):
	// no exec may leave them changed (see osthread.Throwaway).
	ownNS := func() string {
		var b strings.Builder
		for _, ns := range []string{"ipc", "uts", "net", "pid_for_children"} {
			l, err := os.Readlink("/proc/self/ns/" + ns)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(l + " ")
		}
		return b.String()
	}
	before := ownNS()
	defer func() {
		if after := ownNS(); after != before {
			t.Errorf("the process's namespaces are %s after the execs, were %s", after, before)
		}
	}()
	var taskNS []string
	for _, ns := range []string{"ipc", "uts", "net", "pid"} {
		l, err := os.Readlink("/proc/" + strconv.Itoa(p.Pid) + "/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		own, _ := os.Readlink("/proc/self/ns/" + ns)
		if l == own {
			t.Fatalf("the task shares the test's %s namespace", ns)
		}
		taskNS = append(taskNS, l)
	}
	ids := func(id uint32) string { s := strconv.Itoa(int(id)); return s + "\t" + s + "\t" + s + "\t" + s }
	const script = `grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; hostname;
for ns in ipc uts net pid; do readlink /proc/self/ns/$ns; done`
	for _, tc := range []struct {
		name     string
		uid, gid uint32
		groups   []uint32
		caps     []string
		want     []string
	}{
		{"nobody", uid, gid, groups, nil, []string{
			"Uid:\t" + ids(uid), "Gid:\t" + ids(gid),
			"CapEff:\t0000000000000000", "CapBnd:\t" + capMask(t, DefaultCapabilities()),
		}},
		{"root with kill only", 0, 0, nil, []string{"kill"}, []string{
			"Uid:\t" + ids(0), "Gid:\t" + ids(0),
			"CapEff:\t" + capMask(t, []string{"kill"}), "CapBnd:\t" + capMask(t, []string{"kill"}),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A goroutine that enters lands on the main thread now and
			// then: a few more execs make that likely.
			for range 10 {
				e, err := EnterStart(ctx, testInit(t), p.State, &EnterSpec{Path: "true", Env: []string{"PATH=/usr/bin:/bin"}}, EnterIO{})
				if err != nil {
					t.Fatal(err)
				}
				_, _ = e.Wait()
			}
			out, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			e, err := EnterStart(ctx, testInit(t), p.State, &EnterSpec{
				Path: "sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
				UID: tc.uid, GID: tc.gid, Groups: tc.groups, Capabilities: tc.caps,
			}, EnterIO{Stdout: out, Stderr: out})
			if err != nil {
				t.Fatal(err)
			}
			if ps, err := e.Wait(); err != nil || ps.ExitCode() != 0 {
				t.Fatalf("entered command: %v, %v", ps, err)
			}
			b, err := os.ReadFile(out.Name())
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]string(nil), tc.want...), "NoNewPrivs:\t1", "Seccomp:\t2", "entered")
			want = append(want, taskNS...)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			for _, w := range want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("the entered command's output lacks %q:\n%s", w, b)
				}
			}
		})
	}
}
