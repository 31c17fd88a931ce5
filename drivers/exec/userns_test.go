package exec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// TestUserNamespaceTasks runs exec tasks with the plugin's user_namespace
// on (the default) and off. In one, a task's /proc/self/uid_map maps only
// its own user (root in the task is nobody on the host), root in the task
// cannot write a host file only the host's root may write, bound into its
// root read-write, and its secrets dir is its own (it belongs to the host
// uid root maps to); an exec session in it (ExecTask, and ExecTaskStreaming
// as alloc exec runs it) runs as that host user.
// Without it (the control), root in the task writes the host file.
func TestUserNamespaceTasks(t *testing.T) {
	needIsolation(t)
	if err := isolation.UserNamespaces(); err != nil {
		t.Skipf("no user namespaces on this kernel: %v", err)
	}
	const script = `tr -s ' ' < /proc/self/uid_map; id -u; echo s > /secrets/own && echo wrote-secret;
echo task > /hostfile && echo wrote-host-file; cat /hostfile; exec sleep 300`
	for _, tc := range []struct {
		name      string
		userNS    bool
		user      string
		want      []string
		notWant   []string
		secretUID uint32
		execUID   string
	}{
		{"nobody", true, "", []string{" 65534 65534 1\n65534\n", "wrote-secret", "host\n"}, []string{"wrote-host-file"}, 65534, "65534"},
		{"root", true, "root", []string{" 0 65534 1\n0\n", "wrote-secret", "host\n"}, []string{"wrote-host-file"}, 65534, "65534"},
		{"root without a user namespace", false, "root", []string{" 0 0 4294967295\n0\n", "wrote-secret", "wrote-host-file", "task\n"}, nil, 0, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithOptions(Options{AllowUser: true, CgroupParent: testCgroupParent, UserNamespace: tc.userNS}))
			hostFile := filepath.Join(t.TempDir(), "rootonly")
			if err := os.WriteFile(hostFile, []byte("host\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := h.sh(script)
			cfg.User = tc.user
			cfg.Mounts = []*drivers.MountConfig{{TaskPath: "/hostfile", HostPath: hostFile}}
			h.start(cfg)
			var out string
			testwait.Until(t, "the task's output", filepath.Dir(cfg.StdoutPath), func() bool {
				out = stdout(t, cfg)
				return strings.Contains(out, "host\n") || strings.Contains(out, "task\n")
			})
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s\nstderr: %s", w, out, stderr(t, cfg))
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			var st syscall.Stat_t
			if err := syscall.Stat(cfg.TaskDir.SecretsDir, &st); err != nil || st.Uid != tc.secretUID {
				t.Errorf("secrets dir owned by uid %d (%v), want %d", st.Uid, err, tc.secretUID)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := h.d.ExecTask(ctx, cfg.ID, []string{"/bin/sh", "-c", "id -u; cat /secrets/own"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Stdout); got != tc.execUID+"\ns\n" {
				t.Errorf("exec session printed %q (stderr %q), want uid %s and the task's secret", got, res.Stderr, tc.execUID)
			}
			// alloc exec's path: the streaming session runs as the same
			// host user, never as the task's IDs taken as the host's.
			var out2 lockedBuffer
			sres, err := h.d.ExecTaskStreaming(ctx, cfg.ID, &drivers.ExecOptions{
				Command: []string{"/bin/sh", "-c", "id -u; cat /secrets/own"}, Stdout: &out2, Stderr: &out2,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := out2.String(); got != tc.execUID+"\ns\n" || sres.ExitCode != 0 {
				t.Errorf("streaming exec session printed %q (exit %d), want uid %s and the task's secret", got, sres.ExitCode, tc.execUID)
			}
		})
	}
}

// TestUserNamespaceUnavailable: where the kernel allows no user
// namespace, tasks start without one and the fingerprint says so.
func TestUserNamespaceUnavailable(t *testing.T) {
	h := newHarness(t)
	h.d.userNamespaces = func() error { return errors.New("user namespaces are disabled") }
	cfg := h.sh("tr -s ' ' < /proc/self/uid_map")
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr(t, cfg))
	}
	if got := stdout(t, cfg); got != " 0 0 4294967295\n" {
		t.Errorf("uid_map %q, want the host's", got)
	}
	if fp := h.d.check(context.Background()); fp.Attributes["driver.exec.user_namespace"] != "false" {
		t.Errorf("fingerprint attributes %v, want driver.exec.user_namespace = false", fp.Attributes)
	}
}
