package shim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// dirtySignals makes the calling process start its children as an agent
// started under nohup and more would: SIGHUP, SIGINT, SIGQUIT, SIGTERM and
// SIGPIPE ignored (an ignored signal stays ignored across fork and
// execve), and, from the calling goroutine, now locked to its thread, some
// signals blocked (Go's fork gives the child the mask of the thread that
// forks).
func dirtySignals() error {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE)
	runtime.LockOSThread()
	var set unix.Sigset_t
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGTERM, syscall.SIGCHLD} {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	return unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil)
}

// startFromDirtyStarter starts spec's shim from a starter process (this
// test binary playing an agent) with signals ignored and blocked (see
// dirtySignals), and returns the shim's state once the starter exited.
func startFromDirtyStarter(t *testing.T, spec *Spec) *State {
	t.Helper()
	dir := t.TempDir()
	specPath, statePath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "state.json")
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envMode+"=starter", "SHIM_TEST_SPEC="+specPath, "SHIM_TEST_STATE="+statePath,
		"SHIM_TEST_EXIT=1", "SHIM_TEST_DIRTY_SIGNALS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("starter: %v: %s", err, out)
	}
	b, err = os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	cleanupShim(t, &st)
	return &st
}

// signalMasks returns the SigIgn and SigBlk masks of a /proc/<pid>/status
// text.
func signalMasks(t *testing.T, status string) (ignored, blocked uint64) {
	t.Helper()
	found := 0
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "SigIgn" && k != "SigBlk") {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if k == "SigIgn" {
			ignored = n
		} else {
			blocked = n
		}
		found++
	}
	if found != 2 {
		t.Fatalf("no SigIgn and SigBlk in:\n%s", status)
	}
	return ignored, blocked
}

// TestTaskStartsWithDefaultSignals starts tasks from an "agent" with
// signals ignored and blocked: each task must start with no signal
// ignored and none blocked (cat shows its own), and trap SIGHUP.
func TestTaskStartsWithDefaultSignals(t *testing.T) {
	const trapHUP = `trap 'exit 7' HUP; echo ready; while :; do sleep 0.05; done`
	tests := []struct {
		name string
		spec func(t *testing.T, command string, args ...string) *Spec
	}{
		{"process group", func(t *testing.T, command string, args ...string) *Spec {
			s := testSpec(t, "")
			s.Command, s.Args = command, args
			return s
		}},
		{"isolated", func(t *testing.T, command string, args ...string) *Spec {
			s := isolatedSpec(t, "", 0)
			s.Isolation.Spec.Path, s.Isolation.Spec.Args = command, args
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec(t, "/bin/cat", "/proc/self/status")
			st := startFromDirtyStarter(t, spec)
			h, err := Attach(ctxT(t), st)
			if err != nil {
				t.Fatal(err)
			}
			if e, err := h.Wait(ctxT(t)); err != nil || e.ExitCode != 0 {
				t.Fatalf("cat: %+v, %v", e, err)
			}
			if ign, blk := signalMasks(t, logText(t, spec.StdoutPath)); ign != 0 || blk != 0 {
				t.Errorf("task: SigIgn %016x, SigBlk %016x, want none", ign, blk)
			}

			spec = tt.spec(t, "/bin/sh", "-c", trapHUP)
			st = startFromDirtyStarter(t, spec)
			waitForLog(t, spec.StdoutPath, "ready")
			if h, err = Attach(ctxT(t), st); err != nil {
				t.Fatal(err)
			}
			if err := h.Signal(ctxT(t), "SIGHUP"); err != nil {
				t.Fatal(err)
			}
			e, err := h.Wait(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if e.ExitCode != 7 {
				t.Errorf("exit after SIGHUP = %+v, want code 7 from the task's trap", e)
			}
		})
	}
}
