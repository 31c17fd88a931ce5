package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// sandboxJob is a batch exec job whose task prints its user, its
// capabilities, no_new_privs and seccomp mode.
func sandboxJob(id, user string) string {
	userLine := ""
	if user != "" {
		userLine = fmt.Sprintf("user = %q", user)
	}
	return fmt.Sprintf(`job %q {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "exec"
      %s
      config {
        command = "/bin/sh"
        args    = ["-c", "id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, userLine)
}

// TestExecSandboxDefaults runs exec tasks and checks the sandbox they
// get: as nobody by default (a task's "user" needs the plugin's
// allow_user), with no effective capability and a bounding set of the
// default ones only, no_new_privs and the seccomp filter (mode 2). Root in
// a task is checked by the isolation package's tests.
func TestExecSandboxDefaults(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the exec driver needs root")
	}
	a := startAgent(t)
	// Nomad's exec default set: audit_write, chown, dac_override, fowner,
	// fsetid, kill, mknod, net_bind_service, setfcap, setgid, setpcap,
	// setuid, sys_chroot.
	const defaultSet = "00000000a80405fb"
	for _, tc := range []struct {
		id, user, uid, capEff string
	}{
		{"sandbox-nobody", "", "65534", "0000000000000000"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			alloc := runBatch(t, a, tc.id, sandboxJob(tc.id, tc.user))
			out := a.cli(t, "alloc", "logs", alloc.ID, "t").stdout
			fields := map[string]string{}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			for _, line := range lines[1:] {
				k, v, _ := strings.Cut(line, ":")
				fields[k] = strings.TrimSpace(v)
			}
			if lines[0] != tc.uid {
				t.Errorf("uid %q, want %s\n%s", lines[0], tc.uid, out)
			}
			for k, want := range map[string]string{"CapEff": tc.capEff, "CapBnd": defaultSet, "NoNewPrivs": "1", "Seccomp": "2"} {
				if fields[k] != want {
					t.Errorf("%s = %q, want %q\n%s", k, fields[k], want, out)
				}
			}
		})
	}
}
