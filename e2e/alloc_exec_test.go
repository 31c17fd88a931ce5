package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// execJob is a service job of one group per driver, each with one task
// "t" that runs until stopped, all pinned to the node named node.
func execJob(id, node string, docker bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %q {\n  type = \"service\"\n\n", id)
	fmt.Fprintf(&b, "  constraint {\n    attribute = \"${node.unique.name}\"\n    value     = %q\n  }\n\n", node)
	group := func(name, driver, config string) {
		fmt.Fprintf(&b, `  group %q {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "t" {
      driver       = %q
      kill_timeout = "2s"

      config {
%s
      }

      env {
        GREETING = "hello from %s"
      }

      resources {
        cpu    = 10
        memory = 32
      }
    }
  }

`, name, driver, config, driver)
	}
	group("raw", "raw_exec", `        command = "/bin/sleep"
        args    = ["100000"]`)
	group("isolated", "exec", `        command = "/bin/sleep"
        args    = ["100000"]`)
	if docker {
		group("container", "docker", fmt.Sprintf(`        image   = %q
        command = "sleep"
        args    = ["100000"]`, dockerTestImage))
	}
	b.WriteString("}\n")
	return b.String()
}

// execCLI runs `drover alloc exec args...` against addr with stdin.
func execCLI(t *testing.T, addr string, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, droverBin, append([]string{"alloc", "exec"}, args...)...)
	cmd.Env = append(os.Environ(), "DROVER_ADDR="+addr, "NOMAD_ADDR=")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run drover alloc exec %v: %v", args, err)
	}
	return cliResult{code, stdout.String(), stderr.String()}
}

// TestAllocExec runs `alloc exec` into raw_exec, exec and docker tasks of
// a client-only agent, through a server-only agent that forwards the
// session: output and exit code, stdin piped, -job, a terminal with its
// size and Ctrl-C, and the errors (missing command, unknown task, dead
// task) that leave the task running.
func TestAllocExec(t *testing.T) {
	t.Parallel()
	docker := dockerReady() == ""
	if !docker {
		t.Logf("docker tasks left out: %s", dockerReady())
	}
	srv := newPersistentAgent(t, "exec-server", roleServer)
	srv.start(t)
	srv.waitReady(t, surviveStartTimeout)
	sc := srv.client(t)
	worker := newPersistentAgent(t, "exec-worker", roleClient, srv.rpcAddr())
	worker.start(t)
	worker.waitNodeReady(t, sc, worker.name, surviveStartTimeout)

	runJob(t, srv, "execs", execJob("execs", "exec-worker", docker))
	allocs := map[string]string{} // by group
	waitFor(t, surviveRunTimeout, "every task to run", func() (bool, string) {
		stubs, _, err := sc.Jobs().Allocations("execs", false, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, a := range stubs {
			if ts := a.TaskStates["t"]; ts != nil && ts.State == "running" {
				allocs[a.TaskGroup] = a.ID
			}
		}
		want := 2
		if docker {
			want = 3
		}
		return len(allocs) == want, fmt.Sprintf("%d of %d running", len(allocs), want)
	})

	for _, group := range []string{"raw", "isolated", "container"} {
		id, ok := allocs[group]
		if !ok {
			continue
		}
		t.Run(group, func(t *testing.T) {
			// Output, stderr and the exit code, through the server agent.
			r := execCLI(t, srv.addr, "", id, "/bin/sh", "-c", `echo "$GREETING"; echo to-stderr >&2; exit 7`)
			if r.code != 7 || !strings.HasPrefix(r.stdout, "hello from ") || !strings.Contains(r.stderr, "to-stderr") {
				t.Fatalf("exec with output and exit 7:\n%s", r)
			}
			// Stdin piped (-i is the default).
			r = execCLI(t, srv.addr, "line one\nline two\n", id, "cat")
			if r.code != 0 || r.stdout != "line one\nline two\n" {
				t.Fatalf("exec with stdin:\n%s", r)
			}
			// -i=false: the command reads no input.
			r = execCLI(t, srv.addr, "ignored\n", "-i=false", id, "cat")
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("exec -i=false:\n%s", r)
			}
			// A terminal, its size and Ctrl-C.
			execOnTerminal(t, srv.addr, id)
			// A command that does not exist: a clear error, the task
			// untouched.
			r = execCLI(t, srv.addr, "", id, "/no/such/command")
			if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "/no/such/command") {
				t.Fatalf("exec of a missing command:\n%s", r)
			}
			if a, _, err := sc.Allocations().Info(id, nil); err != nil || a.TaskStates["t"].State != "running" || a.TaskStates["t"].Restarts != 0 {
				t.Fatalf("task after the failed exec: %+v, %v", a, err)
			}
		})
	}

	// -job picks the job's running allocation (the job has several: the
	// group's task is named by -task, the same in every group).
	r := execCLI(t, srv.addr, "", "-job", "-task", "t", "execs", "/bin/echo", "via job")
	if r.code != 0 || r.stdout != "via job\n" {
		t.Fatalf("exec -job:\n%s", r)
	}
	r = execCLI(t, srv.addr, "", "-task", "nope", allocs["raw"], "true")
	if r.code == 0 || !strings.Contains(r.stderr, `no task "nope"`) {
		t.Fatalf("exec into an unknown task:\n%s", r)
	}

	// A task that has exited: a clear error.
	if r := srv.cli(t, "job", "stop", "execs"); r.code != 0 {
		t.Fatalf("job stop:\n%s", r)
	}
	waitFor(t, surviveRunTimeout, "the raw_exec task to be dead", func() (bool, string) {
		a, _, err := sc.Allocations().Info(allocs["raw"], nil)
		if err != nil {
			return false, err.Error()
		}
		return a.TaskStates["t"].State == "dead", "task is " + a.TaskStates["t"].State
	})
	r = execCLI(t, srv.addr, "", allocs["raw"], "true")
	if r.code == 0 || !strings.Contains(r.stderr, "not running") {
		t.Fatalf("exec into a dead task:\n%s", r)
	}
}

// execOnTerminal runs `alloc exec` on a pseudo-terminal (so -t is the
// default): the command sees a terminal of the CLI's size, reads a typed
// line, and a Ctrl-C reaches it as SIGINT.
func execOnTerminal(t *testing.T, addr, allocID string) {
	t.Helper()
	master, slave := openTerminal(t, 33, 101)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The size is read after a typed line: a docker daemon older than API
	// 1.42 sizes the terminal only once the command runs.
	script := `test -t 0 && echo on-a-tty; read x; echo "got $x"; stty size; ` +
		`trap 'echo caught-int; exit 9' INT; echo waiting; while :; do sleep 0.1; done`
	cmd := exec.CommandContext(ctx, droverBin, "alloc", "exec", allocID, "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "DROVER_ADDR="+addr, "NOMAD_ADDR=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := &syncBuffer{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	waitFor(t, time.Minute, "the command on a terminal", func() (bool, string) {
		return strings.Contains(out.String(), "on-a-tty"), out.String()
	})
	if _, err := master.Write([]byte("typed\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the typed line, the terminal's size (33x101) and the trap", func() (bool, string) {
		s := out.String()
		return strings.Contains(s, "got typed") && strings.Contains(s, "33 101") && strings.Contains(s, "waiting"), s
	})
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 9 {
		t.Fatalf("alloc exec on a terminal after Ctrl-C: %v, want exit 9; output:\n%s", err, out)
	}
	master.Close()
	<-copied
	if !strings.Contains(out.String(), "caught-int") {
		t.Fatalf("Ctrl-C did not reach the command; output:\n%s", out)
	}
}

// openTerminal opens a pseudo-terminal of rows x cols.
func openTerminal(t *testing.T, rows, cols uint16) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	return master, slave
}
