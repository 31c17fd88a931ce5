package isolation

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needIsolation skips unless the test can create namespaces and cgroups.
func needIsolation(t *testing.T) *CgroupLayout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("isolation needs root")
	}
	layout, err := DetectCgroups()
	if err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
	return layout
}

// testInit is the test binary as the init stage (see TestMain).
func testInit(t *testing.T) InitCommand {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return InitCommand{Path: exe, Args: []string{InitArg}}
}

// taskRoot makes a root directory for a task, as a task dir would be.
func taskRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "task")
	for _, d := range []string{"", "local", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is 0700; the task's user must reach its root.
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	return root
}

// runIsolated runs script with sh in an isolated root as nobody and
// returns its output and wait status.
func runIsolated(t *testing.T, layout *CgroupLayout, res Resources, script string, mutate ...func(*Spec)) (string, syscall.WaitStatus, *Cgroup) {
	t.Helper()
	root := taskRoot(t)
	uid, gid, groups, err := LookupUser(DefaultUser)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: fmt.Sprintf("%s.%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano()), Resources: res})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cg.Destroy(ctx); err != nil {
			t.Errorf("destroy cgroup: %v", err)
		}
	})
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	spec := &Spec{
		Path:    "/bin/sh",
		Args:    []string{"-c", script},
		Env:     []string{"PATH=/usr/bin:/bin"},
		RootDir: root,
		Mounts:  ChrootMounts(DefaultChrootEnv()),
		UID:     uid, GID: gid, Groups: groups,
		Hostname: "task",
	}
	for _, m := range mutate {
		m(spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx, testInit(t), spec, cg, out, out)
	if err != nil {
		t.Fatal(err)
	}
	state, _ := p.Wait()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), state.Sys().(syscall.WaitStatus), cg
}

func TestStartIsolates(t *testing.T) {
	layout := needIsolation(t)
	cases := []struct {
		name   string
		script string
		want   string
		mutate func(*Spec)
	}{
		{"pid 1", `echo $$`, "1\n", nil},
		{"proc self stat", `read pid rest < /proc/self/stat; echo $pid`, "1\n", nil},
		// The shell expands the glob itself: it is the only process.
		{"only own processes", `cat /proc/1/comm; set -- /proc/[0-9]*; echo $#`, "sh\n1\n", nil},
		{"nobody", `id -u; id -g`, "65534\n65534\n", nil},
		{"no host root", `test -e /root/. && echo visible || echo hidden`, "hidden\n", nil},
		{"hostname", `cat /proc/sys/kernel/hostname`, "task\n", nil},
		{"dev null", `echo hi > /dev/null && head -c 4 /dev/zero | wc -c`, "4\n", nil},
		{"read-only usr", `touch /usr/x 2>/dev/null && echo writable || echo ro`, "ro\n", nil},
		{"writable tmp", `echo x > /tmp/f && cat /tmp/f`, "x\n", nil},
		// The host's network namespace itself, not a count of its interfaces,
		// which other tests' containers change meanwhile.
		{"host network by default", `readlink /proc/self/ns/net`, hostNetNS(t), nil},
		{
			name: "own network namespace", script: `grep : /proc/net/dev | cut -d: -f1 | tr -d ' '`, want: "lo\n",
			mutate: func(s *Spec) { s.NetworkIsolation = true },
		},
		{
			// 127.0.0.1 is in the local routing table only while lo is up.
			name: "loopback up in own network namespace", script: `grep -q 127.0.0.1 /proc/net/fib_trie && echo up || echo down`, want: "up\n",
			mutate: func(s *Spec) { s.NetworkIsolation = true },
		},
		{
			name: "chroot without pivot_root", script: `echo $$; test -e /root/. && echo visible || echo hidden`, want: "1\nhidden\n",
			mutate: func(s *Spec) { s.NoPivot = true },
		},
		{
			name: "extra mount and symlinked chroot entry", script: `cat /data/x; readlink /bin`, want: "shared\nusr/bin\n",
			mutate: func(s *Spec) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "x"), []byte("shared\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				_ = os.Chmod(dir, 0o755)
				s.Mounts = append(s.Mounts, Mount{Source: dir, Target: "/data"})
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mutate []func(*Spec)
			if tc.mutate != nil {
				mutate = append(mutate, tc.mutate)
			}
			out, ws, _ := runIsolated(t, layout, Resources{MemoryBytes: 64 << 20}, tc.script, mutate...)
			if ws.ExitStatus() != 0 || ws.Signaled() {
				t.Fatalf("exit %v, output %q", ws, out)
			}
			if tc.want != "" && out != tc.want {
				t.Fatalf("output %q, want %q", out, tc.want)
			}
			t.Logf("output %q", out)
		})
	}
}

func TestProbe(t *testing.T) {
	needIsolation(t)
	if err := Probe(context.Background(), testInit(t)); err != nil {
		t.Fatal(err)
	}
	if err := Probe(context.Background(), InitCommand{Path: "/nonexistent/drover"}); err == nil {
		t.Fatal("Probe with a missing init binary succeeded")
	}
}

func TestEnter(t *testing.T) {
	layout := needIsolation(t)
	root := taskRoot(t)
	uid, gid, groups, err := LookupUser(DefaultUser)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: fmt.Sprintf("enter.%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer func() {
		if err := cg.Destroy(ctx); err != nil {
			t.Errorf("destroy cgroup: %v", err)
		}
	}()
	spec := &Spec{
		Path: "/bin/sh", Args: []string{"-c", "echo marker > /tmp/m; exec sleep 1000"},
		Env: []string{"PATH=/usr/bin:/bin"}, RootDir: root, Mounts: ChrootMounts(DefaultChrootEnv()),
		UID: uid, GID: gid, Groups: groups, Hostname: "entered",
	}
	p, err := Start(ctx, testInit(t), spec, cg, nil, nil)
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

	var out, errOut strings.Builder
	script := `until test -e /tmp/m; do sleep 0.01; done; cat /tmp/m; hostname; id -u; cat /proc/1/comm; test -e /root/. && echo visible || echo hidden; grep -q drover-test /proc/self/cgroup && echo in-cgroup; exit 7`
	ps, err := Enter(ctx, testInit(t), p.State, &EnterSpec{
		Path: "sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
		UID: uid, GID: gid, Groups: groups,
	}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if ps.ExitCode() != 7 {
		t.Fatalf("exit %v, stderr %q", ps, errOut.String())
	}
	if want := "marker\nentered\n65534\nsleep\nhidden\nin-cgroup\n"; out.String() != want {
		t.Fatalf("output %q, want %q (stderr %q)", out.String(), want, errOut.String())
	}
	pids, err := cg.Pids()
	if err != nil || len(pids) != 1 {
		t.Fatalf("cgroup has %v (%v) after the command exited, want the task only", pids, err)
	}

	if _, err := Enter(ctx, testInit(t), p.State, &EnterSpec{Path: "no-such-cmd", UID: uid, GID: gid}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Enter with a missing command: %v", err)
	}
}

func TestCapabilitiesDropped(t *testing.T) {
	layout := needIsolation(t)
	cases := []struct {
		name string
		caps []string
		want string // CapBnd of the task
	}{
		{"default", nil, capMask(t, DefaultCapabilities())},
		{"only kill", []string{"KILL"}, capMask(t, []string{"kill"})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := taskRoot(t)
			cg, err := NewCgroup(layout, CgroupConfig{Parent: testParent, Name: fmt.Sprintf("caps.%d", time.Now().UnixNano())})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			defer cg.Destroy(ctx) //nolint:errcheck // best effort in a test
			out, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			// Root in the task, to see that even root lacks the others.
			p, err := Start(ctx, testInit(t), &Spec{
				Path: "/bin/sh", Args: []string{"-c", "grep CapBnd /proc/self/status; grep CapEff /proc/self/status"},
				RootDir: root, Mounts: ChrootMounts(DefaultChrootEnv()), Capabilities: tc.caps,
			}, cg, out, out)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(out.Name())
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				_, v, _ := strings.Cut(line, ":")
				if got := strings.TrimSpace(v); got != tc.want {
					t.Errorf("%s, want %s", line, tc.want)
				}
			}
		})
	}
	if _, err := ParseCapabilities([]string{"cap_net_raw", "NET_ADMIN", "bogus"}); err == nil {
		t.Fatal("ParseCapabilities accepted bogus")
	}
}

// capMask returns the /proc status hex mask of caps.
func capMask(t *testing.T, caps []string) string {
	t.Helper()
	var m uint64
	for _, c := range caps {
		m |= 1 << capabilityNumbers[c]
	}
	return fmt.Sprintf("%016x", m)
}

// hostInterfaces returns how many network interfaces the host has, as a
// line of output.
// hostNetNS is this process's network namespace as readlink prints it.
func hostNetNS(t *testing.T) string {
	t.Helper()
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return ns + "\n"
}

func TestInitMainByHand(t *testing.T) {
	if code, ok := RunIfInit([]string{"version"}); ok || code != 0 {
		t.Fatalf("RunIfInit(version) = %d, %v; want 0, false", code, ok)
	}
	// Run by hand (no pipes on fds 3 and 4), the init stage refuses.
	cmd := exec.Command(testInit(t).Path, InitArg)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "not meant to be run by hand") {
		t.Fatalf("init stage by hand: %v, %q", err, out)
	}
}
