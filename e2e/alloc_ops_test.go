package e2e

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// chattyJob writes 300,000 numbered lines at once, then 300,000 more a few
// seconds later, into 1 MB log files: about 4.3 MB, so several rotations.
const chattyJob = `job "chatty" {
  type = "service"

  group "g" {
    task "talk" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "seq 1 300000; sleep 4; seq 300001 600000; sleep 300"]
      }

      logs {
        max_files     = 10
        max_file_size = 1
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`

// countedLines checks that out is "1\n2\n...k\n" and returns k.
func countedLines(out string) (int, error) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		if l != strconv.Itoa(i+1) {
			return i, fmt.Errorf("line %d is %q, want %d", i+1, l, i+1)
		}
	}
	return len(lines), nil
}

// TestAllocLogsAcrossRotation reads a fast writer's rotated logs with
// `alloc logs`, whole and followed, and browses them with `alloc fs`.
func TestAllocLogsAcrossRotation(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "chatty.nomad.hcl", chattyJob)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	var alloc *api.AllocationListStub
	waitFor(t, 60*time.Second, "the allocation to run", func() (bool, string) {
		var why string
		alloc, why = jobAlloc(t, c, "chatty")
		if alloc == nil {
			return false, why
		}
		return alloc.ClientStatus == api.AllocClientStatusRunning, "client status " + alloc.ClientStatus
	})
	id := alloc.ID[:8]

	waitFor(t, 60*time.Second, "the first 300,000 lines", func() (bool, string) {
		r := a.cli(t, "alloc", "logs", "-tail", "-n", "1", id)
		n, _ := strconv.Atoi(strings.TrimSpace(r.stdout))
		return r.code == 0 && n >= 300000, r.String()
	})
	r := a.cli(t, "alloc", "logs", id)
	n, err := countedLines(r.stdout)
	if r.code != 0 || err != nil || n < 300000 {
		t.Fatalf("alloc logs: exit %d, %d lines in order (%v); stderr %s", r.code, n, err, r.stderr)
	}
	if r := a.cli(t, "alloc", "logs", "-tail", "-n", "3", id, "talk"); r.code != 0 || len(strings.Split(strings.TrimSpace(r.stdout), "\n")) != 3 {
		t.Errorf("alloc logs -tail -n 3:\n%s", r)
	}

	// Follow from the start: it must see the second batch, written after
	// more rotations, with nothing missing.
	out := &syncBuffer{}
	follow := exec.Command(droverBin, "alloc", "logs", "-f", id)
	follow.Env = append(follow.Environ(), "DROVER_ADDR="+a.addr, "NOMAD_ADDR=")
	follow.Stdout = out
	errOut := &syncBuffer{}
	follow.Stderr = errOut
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- follow.Wait() }()
	waitFor(t, 90*time.Second, "alloc logs -f to show line 600000", func() (bool, string) {
		s := out.String()
		return strings.HasSuffix(s, "\n600000\n"), fmt.Sprintf("%d bytes so far; stderr %s", len(s), errOut)
	})
	if n, err := countedLines(out.String()); err != nil || n != 600000 {
		t.Errorf("followed output: %d lines in order, want 600000: %v", n, err)
	}
	_ = follow.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("alloc logs -f after Ctrl-C: %v; stderr %s", err, errOut)
		}
	case <-time.After(30 * time.Second):
		_ = follow.Process.Kill()
		t.Errorf("alloc logs -f did not stop on SIGINT")
	}

	r = a.cli(t, "alloc", "fs", id, "alloc/logs")
	if r.code != 0 || strings.Count(r.stdout, "talk.stdout.") < 4 || !strings.HasPrefix(r.stdout, "Mode ") {
		t.Errorf("alloc fs alloc/logs: want at least 4 rotated stdout files:\n%s", r)
	}
	if r := a.cli(t, "alloc", "fs", id, "../../"); r.code == 0 || !strings.Contains(r.stderr, "outside the allocation directory") {
		t.Errorf("alloc fs ../../:\n%s", r)
	}
	// The shims' state (the tasks' environment) is Drover's own: hidden.
	if r := a.cli(t, "alloc", "fs", id); r.code != 0 || strings.Contains(r.stdout, ".shims") || !strings.Contains(r.stdout, "talk/") {
		t.Errorf("alloc fs of the alloc dir: want talk/ and no .shims:\n%s", r)
	}
	if r := a.cli(t, "alloc", "fs", id, ".shims"); r.code == 0 || !strings.Contains(r.stderr, "no such file or directory") {
		t.Errorf("alloc fs .shims:\n%s", r)
	}

	// Stop it: a replacement runs; once the stopped one is done, system gc
	// removes it (from the servers too) and its files are gone.
	if r := a.cli(t, "alloc", "stop", id); r.code != 0 {
		t.Fatalf("alloc stop:\n%s", r)
	}
	waitFor(t, 60*time.Second, "the stopped allocation to complete and a replacement to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("chatty", true, nil)
		if err != nil {
			return false, err.Error()
		}
		var stopped, running bool
		for _, x := range allocs {
			stopped = stopped || (x.ID == alloc.ID && x.ClientStatus == api.AllocClientStatusComplete)
			running = running || (x.ID != alloc.ID && x.ClientStatus == api.AllocClientStatusRunning)
		}
		return stopped && running, fmt.Sprintf("%d allocations", len(allocs))
	})
	r = a.cli(t, "system", "gc")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 1 terminal allocation: "+id) {
		t.Errorf("system gc:\n%s", r)
	}
	// system gc is the servers' collection too: the allocation is gone
	// from the servers as well as from the node.
	if r := a.cli(t, "alloc", "fs", id); r.code == 0 || !strings.Contains(r.stderr, "No allocation(s) with prefix or ID") {
		t.Errorf("alloc fs of a collected allocation:\n%s", r)
	}
}
