package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
)

// asUnderNohup starts the agent as `nohup` and more would: through a shell
// that ignores SIGHUP and SIGQUIT (an ignored signal stays ignored across
// execve, and Go programs keep it so for their children).
func asUnderNohup(c *exec.Cmd) {
	c.Args = append([]string{"/bin/sh", "-c", `trap '' HUP QUIT; exec "$0" "$@"`}, c.Args...)
	c.Path = "/bin/sh"
}

const trapJob = `job "trap" {
  type = "service"

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "grep ^SigIgn /proc/$$/status; echo pid=$$; trap 'echo got-hup' HUP; echo ready; while :; do sleep 0.1; done"]
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`

// TestTasksStartWithDefaultSignals runs an agent with SIGHUP and SIGQUIT
// ignored: its raw_exec task must start with no signal ignored, trap the
// SIGHUP that `alloc signal` sends, and be supervised by drover-shim.
func TestTasksStartWithDefaultSignals(t *testing.T) {
	t.Parallel()
	a := startAgent(t, asUnderNohup)
	c := a.client(t)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "trap.nomad.hcl", trapJob)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	alloc := runningAllocOf(t, c, "trap")
	id := alloc.ID[:8]
	var logs string
	waitFor(t, 60*time.Second, "the task to be ready", func() (bool, string) {
		r := a.cli(t, "alloc", "logs", id, "t")
		logs = r.stdout
		return strings.Contains(logs, "ready"), r.String()
	})
	if !strings.Contains(logs, "SigIgn:\t0000000000000000") {
		t.Errorf("the task started with signals ignored:\n%s", logs)
	}
	if r := a.cli(t, "alloc", "signal", "-s", "SIGHUP", id, "t"); r.code != 0 {
		t.Fatalf("alloc signal:\n%s", r)
	}
	waitFor(t, 60*time.Second, "the task's trap to see SIGHUP", func() (bool, string) {
		r := a.cli(t, "alloc", "logs", id, "t")
		return strings.Contains(r.stdout, "got-hup"), r.String()
	})

	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no pid in the task's output:\n%s", logs)
	}
	pid, _ := strconv.Atoi(m[1])
	p, err := readProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(p.ppid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(exe) != shim.Binary {
		t.Errorf("the task's shim runs %s, want %s beside the agent's binary", exe, shim.Binary)
	}
}
