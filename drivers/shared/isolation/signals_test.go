package isolation

import (
	"bufio"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sigBit is sig's bit in a /proc status mask and in a Sigset_t word.
func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// dirtyThisThread ignores SIGHUP and SIGINT in this process and blocks
// SIGUSR1 and SIGALRM on the calling goroutine's thread, to which it locks
// it, as in an agent started under nohup; the test's cleanup undoes both.
func dirtyThisThread(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	var set, old unix.Sigset_t
	set.Val[0] = sigBit(syscall.SIGUSR1) | sigBit(syscall.SIGALRM)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		signal.Reset(syscall.SIGHUP, syscall.SIGINT)
		_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
		runtime.UnlockOSThread()
	})
}

// statusMasks returns SigIgn and SigBlk from a /proc/<pid>/status text.
func statusMasks(t *testing.T, status string) (ignored, blocked uint64) {
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
		t.Fatalf("no SigIgn and SigBlk in %q", status)
	}
	return ignored, blocked
}

// TestStartedTaskHasDefaultSignals starts a task from a thread with
// signals blocked in a process that ignores some: the init stage must
// execve it with none ignored and none blocked.
func TestStartedTaskHasDefaultSignals(t *testing.T) {
	layout := needIsolation(t)
	dirtyThisThread(t)
	out, ws, _ := runIsolated(t, layout, Resources{}, "", func(s *Spec) {
		s.Path, s.Args = "/bin/cat", []string{"/proc/self/status"}
	})
	if ws.ExitStatus() != 0 {
		t.Fatalf("cat: %v: %s", ws, out)
	}
	if ign, blk := statusMasks(t, out); ign != 0 || blk != 0 {
		t.Errorf("task: SigIgn %016x, SigBlk %016x, want none", ign, blk)
	}
}

// TestDefaultSignals checks the reset on this process: an ignored signal
// gets its default action back and the thread's mask is emptied.
func TestDefaultSignals(t *testing.T) {
	dirtyThisThread(t)
	if ign, err := signalIgnored(int(syscall.SIGHUP)); err != nil || !ign {
		t.Fatalf("SIGHUP ignored = %v, %v before the reset", ign, err)
	}
	if err := DefaultSignals(); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if ign, err := signalIgnored(int(sig)); err != nil || ign {
			t.Errorf("%v ignored = %v, %v after the reset", sig, ign, err)
		}
	}
	var mask unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, nil, &mask); err != nil {
		t.Fatal(err)
	}
	if mask != (unix.Sigset_t{}) {
		t.Errorf("thread mask after the reset = %x, want empty", mask.Val)
	}
}
