package shim

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/testwait"
)

func TestOutputGoesToLogFiles(t *testing.T) {
	spec := testSpec(t, `echo hello; echo oops >&2; echo "$GREETING from $(pwd)"`)
	spec.Env = append(spec.Env, "GREETING=hi")
	h := startShim(t, spec)
	e, err := h.Wait(ctxT(t))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if e.ExitCode != 0 || e.Signal != 0 {
		t.Errorf("exit = %+v, want 0", e)
	}
	if got, want := logText(t, spec.StdoutPath), "hello\nhi from "+spec.Dir+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := logText(t, spec.StderrPath); got != "oops\n" {
		t.Errorf("stderr = %q, want %q", got, "oops\n")
	}
}

func TestLogRotationLimits(t *testing.T) {
	// 3000 lines of 1000 bytes through 1 MB files, at most 2 files kept.
	spec := testSpec(t, `i=0; while [ $i -lt 3000 ]; do printf '%0999d\n' $i; i=$((i+1)); done`)
	spec.MaxFiles, spec.MaxFileSizeMB = 2, 1
	h := startShim(t, spec)
	if _, err := h.Wait(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(spec.StdoutPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "task.stdout.") {
			names = append(names, e.Name())
		}
	}
	if strings.Join(names, ",") != "task.stdout.1,task.stdout.2" {
		t.Fatalf("files = %v, want task.stdout.1 and .2", names)
	}
	b, err := os.ReadFile(filepath.Join(dir, "task.stdout.2"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if last := lines[len(lines)-1]; last != strings.Repeat("0", 995)+"2999" {
		t.Errorf("last line = %q...", last[:20])
	}
	for _, l := range lines {
		if len(l) != 999 {
			t.Fatalf("a line was split: %d bytes", len(l))
		}
	}
}

func TestExitIsRecorded(t *testing.T) {
	tests := []struct {
		script   string
		code     int
		signal   int
		exitFile bool
	}{
		{"exit 0", 0, 0, true},
		{"exit 3", 3, 0, true},
		{"kill -TERM $$", 143, 15, true},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			spec := testSpec(t, tt.script)
			h := startShim(t, spec)
			e, err := h.Wait(ctxT(t))
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if e.ExitCode != tt.code || e.Signal != tt.signal {
				t.Errorf("exit = %d/%d, want %d/%d", e.ExitCode, e.Signal, tt.code, tt.signal)
			}
			onDisk, err := readExit(spec.StateDir)
			if err != nil || onDisk == nil {
				t.Fatalf("exit file: %v, %v", onDisk, err)
			}
			if onDisk.ExitCode != tt.code || onDisk.Signal != tt.signal {
				t.Errorf("exit file = %+v", onDisk)
			}
			st := h.State()
			testwait.Exit(t, "shim to exit by itself", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
			// The shim is this process's child: Start's reaper must not
			// leave it a zombie.
			select {
			case <-h.reaper.done:
			case <-time.After(testwait.Bound):
				t.Fatal("the shim exited but Start's reaper did not reap it")
			}
			if _, err := readProcStat(st.ShimPID); err == nil {
				t.Fatal("the shim is still in /proc after its reaper reaped it")
			}
		})
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		signal  string
		timeout time.Duration
		code    int
		sig     int
		maxTime time.Duration
	}{
		{"SIGINT ends the task", `echo ready; exec sleep 100`, "SIGINT", 30 * time.Second, 130, 2, 15 * time.Second},
		{"default signal is SIGINT", `echo ready; exec sleep 100`, "", 30 * time.Second, 130, 2, 15 * time.Second},
		{"SIGTERM to a group", `sleep 100 & echo ready; wait`, "TERM", 30 * time.Second, 143, 15, 15 * time.Second},
		{"ignored SIGINT gets SIGKILL after the timeout", `trap '' INT; echo ready; sleep 100`, "SIGINT", 300 * time.Millisecond, 137, 9, 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, tt.script)
			h := startShim(t, spec)
			waitForLog(t, spec.StdoutPath, "ready")
			start := time.Now()
			if err := h.Stop(ctxT(t), tt.signal, tt.timeout); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if d := time.Since(start); d > tt.maxTime {
				t.Errorf("Stop took %v", d)
			}
			if tt.sig == 9 && time.Since(start) < tt.timeout {
				t.Errorf("killed before the timeout")
			}
			e, err := h.Wait(ctxT(t))
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if e.ExitCode != tt.code || e.Signal != tt.sig {
				t.Errorf("exit = %d/%d, want %d/%d", e.ExitCode, e.Signal, tt.code, tt.sig)
			}
			if err := h.Signal(ctxT(t), "HUP"); !errors.Is(err, ErrTaskExited) {
				t.Errorf("Signal after exit = %v, want ErrTaskExited", err)
			}
			if err := h.Stop(ctxT(t), "INT", time.Second); err != nil {
				t.Errorf("second Stop = %v, want nil", err)
			}
		})
	}
}

func TestSignalReachesTheTask(t *testing.T) {
	spec := testSpec(t, `trap 'echo got-hup' HUP; echo ready; while :; do sleep 0.05; done`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	if err := h.Signal(ctxT(t), "SIGHUP"); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	waitForLog(t, spec.StdoutPath, "got-hup")
	if err := h.Signal(ctxT(t), "SIGNOPE"); err == nil {
		t.Error("unknown signal: want an error")
	}
	if err := h.Stop(ctxT(t), "SIGTERM", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestStatusAndStats(t *testing.T) {
	// No shell: Start returns once sleep runs (a shell's exec could be
	// under way while the stats are read).
	spec := testSpec(t, "")
	spec.Command, spec.Args = "/bin/sleep", []string{"100"}
	h := startShim(t, spec)
	s, err := h.Status(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Running || s.TaskPID != h.State().TaskPID || s.Exit != nil {
		t.Errorf("status = %+v", s)
	}
	u, err := h.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if u.Pids != 1 || u.RSSBytes == 0 {
		t.Errorf("usage = %+v, want one process with some RSS", u)
	}
	if err := h.Stop(ctxT(t), "SIGKILL", 0); err != nil {
		t.Fatal(err)
	}
	s, err = h.Status(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Running || s.Exit == nil || s.Exit.Signal != 9 {
		t.Errorf("status after stop = %+v", s)
	}
	if _, err := h.Stats(ctxT(t)); !errors.Is(err, ErrTaskExited) {
		t.Errorf("Stats after exit = %v, want ErrTaskExited", err)
	}
}

// roundTrip persists and reloads st as an agent would.
func roundTrip(t *testing.T, st *State) *State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestAttachAfterAgentRestart(t *testing.T) {
	spec := testSpec(t, `echo ready; exec sleep 100`)
	st := roundTrip(t, startShim(t, spec).State()) // the Handle is dropped
	waitForLog(t, spec.StdoutPath, "ready")

	h, err := Attach(ctxT(t), st)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	s, err := h.Status(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Running || s.TaskPID != st.TaskPID {
		t.Errorf("status = %+v, want running task pid %d", s, st.TaskPID)
	}
	if err := h.Stop(ctxT(t), "SIGTERM", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	e, err := h.Wait(ctxT(t))
	if err != nil || e.Signal != 15 || e.ExitCode != 143 {
		t.Errorf("Wait = %+v, %v; want 143/15", e, err)
	}
}

func TestAttachAfterTheTaskExitedAlone(t *testing.T) {
	spec := testSpec(t, `echo bye; exit 7`)
	st := roundTrip(t, startShim(t, spec).State())
	testwait.Exit(t, "shim to exit", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
	h, err := Attach(ctxT(t), st)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	e, err := h.Wait(ctxT(t))
	if err != nil || e.ExitCode != 7 {
		t.Fatalf("Wait = %+v, %v; want exit 7", e, err)
	}
	s, err := h.Status(ctxT(t))
	if err != nil || s.Running || s.Exit.ExitCode != 7 {
		t.Errorf("Status = %+v, %v", s, err)
	}
	if err := h.Signal(ctxT(t), "HUP"); !errors.Is(err, ErrTaskExited) {
		t.Errorf("Signal = %v, want ErrTaskExited", err)
	}
	if got := logText(t, spec.StdoutPath); got != "bye\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestShimKilledLeavesNoTask(t *testing.T) {
	spec := testSpec(t, `sleep 1000 & echo "child $!"; wait`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "child ")
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(logText(t, spec.StdoutPath), "child ")))
	if err != nil {
		t.Fatal(err)
	}
	st := h.State()
	if err := syscall.Kill(st.ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, err = h.Wait(ctxT(t))
	if !errors.Is(err, ErrShimDied) {
		t.Fatalf("Wait = %v, want ErrShimDied", err)
	}
	if !strings.Contains(err.Error(), "shim exited without recording the task's exit") {
		t.Errorf("error %q does not say what happened", err)
	}
	testwait.Exit(t, "task's main process to be killed", st.TaskPID, nil)
	testwait.Exit(t, "task's child to be killed", child, nil)

	if _, err := Attach(ctxT(t), roundTrip(t, st)); !errors.Is(err, ErrShimDied) {
		t.Errorf("Attach = %v, want ErrShimDied", err)
	}
	if err := h.Stop(ctxT(t), "", time.Second); err != nil {
		t.Errorf("Stop of a task whose shim died = %v, want nil", err)
	}
}

func TestShimOutlivesItsStarter(t *testing.T) {
	tests := []struct {
		name string
		kill bool // SIGKILL the starter's process group, else let it exit
	}{
		{"starter exits", false},
		{"starter's process group is SIGKILLed", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, `echo ready; exec sleep 100`)
			dir := t.TempDir()
			specPath, statePath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "state.json")
			b, _ := json.Marshal(spec)
			if err := os.WriteFile(specPath, b, 0o600); err != nil {
				t.Fatal(err)
			}
			exe, _ := os.Executable()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), envMode+"=starter", "SHIM_TEST_SPEC="+specPath, "SHIM_TEST_STATE="+statePath)
			if !tt.kill {
				cmd.Env = append(cmd.Env, "SHIM_TEST_EXIT=1")
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var st State
			testwait.Until(t, "starter to write the shim state", dir, func() bool {
				b, err := os.ReadFile(statePath)
				return err == nil && json.Unmarshal(b, &st) == nil
			})
			cleanupShim(t, &st)
			if tt.kill {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			_ = cmd.Wait()

			h, err := Attach(ctxT(t), &st)
			if err != nil {
				t.Fatalf("Attach: %v", err)
			}
			waitForLog(t, spec.StdoutPath, "ready")
			if pidGone(st.TaskPID) {
				t.Fatal("task died with its starter")
			}
			s, err := h.Status(ctxT(t))
			if err != nil || !s.Running {
				t.Fatalf("Status = %+v, %v", s, err)
			}
			if err := h.Stop(ctxT(t), "SIGINT", 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if e, err := h.Wait(ctxT(t)); err != nil || e.ExitCode != 130 {
				t.Errorf("Wait = %+v, %v", e, err)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	exe, _ := os.Executable()
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   string
	}{
		{"command not found", func(s *Spec) { s.Command = "no-such-command-xyz" }, "not found"},
		{"missing program", func(s *Spec) { s.Command = "/nonexistent/prog" }, "no such file"},
		{"unknown user", func(s *Spec) { s.User = "no-such-user-xyz" }, "no-such-user-xyz"},
		{"no command", func(s *Spec) { s.Command = "" }, "command is empty"},
		{"socket path too long", func(s *Spec) { s.SocketPath = "/" + strings.Repeat("x", 120) }, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, "exit 0")
			tt.mutate(spec)
			h, err := Start(ctxT(t), exe, nil, spec)
			if err == nil {
				cleanupShim(t, h.State())
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestStartIsCancelledByContext(t *testing.T) {
	spec := testSpec(t, "exit 0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, "/bin/sleep", []string{"100"}, spec); err == nil {
		t.Fatal("Start with a cancelled context succeeded")
	}
}

func TestIdleShimRSS(t *testing.T) {
	tests := []struct {
		name string
		spec func(t *testing.T) *Spec
	}{
		{"plain", func(t *testing.T) *Spec { return testSpec(t, `exec sleep 100`) }},
		{"isolated", func(t *testing.T) *Spec { return isolatedSpec(t, `exec sleep 100`, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startShim(t, tt.spec(t))
			st := h.State()
			// A few requests, as an agent polling stats would make.
			for range 20 {
				if _, err := h.Stats(ctxT(t)); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile("/proc/" + strconv.Itoa(st.ShimPID) + "/status")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "RssAnon:") || strings.HasPrefix(line, "Threads:") {
					t.Logf("idle %s shim %s (test binary%s)", tt.name, strings.Join(strings.Fields(line), " "), raceNote)
				}
			}
			if err := h.Stop(ctxT(t), "SIGKILL", 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEscapedProcessDoesNotHoldTheExit(t *testing.T) {
	// A process that left the task's group (setsid) keeps stdout open; the
	// shim gives up draining after drainTimeout and records the exit.
	spec := testSpec(t, `setsid sleep 100 & echo "escaped $!"; exit 4`)
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "escaped ")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(logText(t, spec.StdoutPath), "escaped ")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	e, err := h.Wait(ctxT(t))
	if err != nil || e.ExitCode != 4 {
		t.Fatalf("Wait = %+v, %v; want exit 4", e, err)
	}
}

func TestSecondShimOnTheSameStateDirIsRefused(t *testing.T) {
	spec := testSpec(t, `exec sleep 100`)
	h := startShim(t, spec)
	exe, _ := os.Executable()
	if _, err := Start(ctxT(t), exe, nil, spec); err == nil || !strings.Contains(err.Error(), "already serves") {
		t.Errorf("second Start = %v, want refusal", err)
	}
	if err := h.Stop(ctxT(t), "KILL", 0); err != nil {
		t.Fatal(err)
	}
}

func TestTaskRunsAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a task as another user needs root")
	}
	spec := testSpec(t, `id -u`)
	spec.User = "nobody"
	spec.Dir = "/" // the test's temp dir is private to root
	h := startShim(t, spec)
	if e, err := h.Wait(ctxT(t)); err != nil || e.ExitCode != 0 {
		t.Fatalf("Wait = %+v, %v", e, err)
	}
	if got := strings.TrimSpace(logText(t, spec.StdoutPath)); got == "0" || got == "" {
		t.Errorf("task ran as uid %q, want nobody's", got)
	}
}

func TestMainUsage(t *testing.T) {
	if code := Main(nil); code != 2 {
		t.Errorf("Main without flags = %d, want 2", code)
	}
	if _, ok := RunIfShim([]string{"agent", "-dev"}); ok {
		t.Error("RunIfShim ran for another command")
	}
}

func TestCleanup(t *testing.T) {
	spec := testSpec(t, `exec sleep 100`)
	h := startShim(t, spec)
	if err := h.Cleanup(); err == nil {
		t.Error("Cleanup of a running shim succeeded")
	}
	if err := h.Stop(ctxT(t), "KILL", 0); err != nil {
		t.Fatal(err)
	}
	e, err := h.Wait(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if r := e.ExitResult(); r.ExitCode != 137 || r.Signal != 9 || r.Successful() {
		t.Errorf("ExitResult = %+v", r)
	}
	st := h.State()
	testwait.Exit(t, "shim to exit", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
	if err := h.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spec.StateDir); !os.IsNotExist(err) {
		t.Errorf("state dir still there: %v", err)
	}
	if got, err := h.Wait(ctxT(t)); err != nil || got.ExitCode != 137 {
		t.Errorf("Wait after Cleanup = %+v, %v; want the known exit", got, err)
	}
}
