package testwait

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// recorder is a TB that records a failure instead of ending the test.
type recorder struct {
	mu     sync.Mutex
	failed string
}

func (*recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	panic(r)
}

func TestExit(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Exit(t, "sh", cmd.Process.Pid, nil)
	}()
	select {
	case <-done:
		t.Fatal("Exit returned while the process runs")
	case <-time.After(50 * time.Millisecond): // a negative check: any wait shows the bug
	}
	_ = stdin.Close() // sh reads EOF and exits; a zombie until Wait
	<-done
	_ = cmd.Wait()
	// A process gone before the call, and a pid reused by another.
	Exit(t, "reaped", cmd.Process.Pid, nil)
	Exit(t, "reused", os.Getpid(), func() bool { return false })
}

func TestUntil(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	done := make(chan struct{})
	go func() {
		defer close(done)
		FileContains(t, "ready", path, "ready")
	}()
	if err := os.WriteFile(path, []byte("starting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("ready\n"); err != nil {
		t.Fatal(err)
	}
	<-done
	Exists(t, "log", path)
}

func TestUntilMissingDir(t *testing.T) {
	r := &recorder{}
	func() {
		defer func() { _ = recover() }()
		Until(r, "x", filepath.Join(t.TempDir(), "nope"), func() bool { return false })
	}()
	if r.failed == "" {
		t.Fatal("a missing directory did not fail the wait")
	}
}
