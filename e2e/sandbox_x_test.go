package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// secretsJob is a batch job whose task "t" (driver, its config block's
// body and an optional user line) prints what it says.
func secretsJob(id, driver, user, config string) string {
	return fmt.Sprintf(`job %q {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = %q
      %s
      config {
%s
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, driver, user, config)
}

// TestSandboxSecretsTmpfsAndUserNamespace runs tasks of each driver in a
// dev agent whose exec plugin allows "user": every task's secrets dir is
// a 1 MiB noexec tmpfs (the docker task's bound into its container); exec
// tasks run in a user namespace that maps their user to itself, and root
// in the task to nobody on the host. When the agent stops (a dev agent
// destroys its allocations), the tmpfs go: the test's temporary data dir
// could not be removed otherwise.
//
// It runs in parallel with other tests: it changes nothing outside its
// own agent.
func TestSandboxSecretsTmpfsAndUserNamespace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the exec driver and tmpfs mounts need root")
	}
	cfg := writeFile(t, "exec.hcl", `plugin "exec" {
  config {
    allow_user = true
  }
}
`)
	a := startAgent(t, func(cmd *exec.Cmd) { cmd.Args = append(cmd.Args, "-config", cfg) })
	// The secrets dir's line of the mount table (in HCL, quotes escaped).
	const mounts = `grep -E \" (/secrets|$NOMAD_SECRETS_DIR) \" /proc/mounts`
	cases := []struct {
		id, driver, user, config string
		want                     []string
		skip                     func() string
	}{
		{
			id: "secrets-exec", driver: "exec",
			config: `        command = "/bin/sh"
        args    = ["-c", "tr -s ' ' < /proc/self/uid_map; id -u; ` + mounts + `"]`,
			want: []string{" 65534 65534 1\n65534\n", "tmpfs /secrets tmpfs ", "noexec", "size=1024k"},
		},
		{
			id: "secrets-exec-root", driver: "exec", user: `user = "root"`,
			config: `        command = "/bin/sh"
        args    = ["-c", "tr -s ' ' < /proc/self/uid_map; id -u; echo s > /secrets/x && cat /secrets/x"]`,
			want: []string{" 0 65534 1\n0\ns\n"},
		},
		{
			id: "secrets-raw-exec", driver: "raw_exec",
			config: `        command = "/bin/sh"
        args    = ["-c", "` + mounts + `"]`,
			want: []string{"/t/secrets tmpfs ", "noexec", "size=1024k"},
		},
		{
			id: "secrets-docker", driver: "docker",
			config: fmt.Sprintf(`        image   = %q
        command = "sh"
        args    = ["-c", "grep ' /secrets ' /proc/mounts"]`, dockerTestImage),
			want: []string{"tmpfs /secrets tmpfs ", "noexec", "size=1024k"},
			skip: dockerReady,
		},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			if tc.skip != nil {
				if why := tc.skip(); why != "" {
					t.Skip(why)
				}
			}
			alloc := runBatch(t, a, tc.id, secretsJob(tc.id, tc.driver, tc.user, tc.config))
			out := a.cli(t, "alloc", "logs", alloc.ID, "t").stdout
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
