package docker

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// The pause program is a valid static ELF executable for each
// architecture it is made for; on this machine's it runs until killed.
func TestPauseELF(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		mc := pauseCode(arch)
		f, err := elf.NewFile(bytes.NewReader(pauseELF(mc)))
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		if f.Machine != want || f.Type != elf.ET_EXEC || len(f.Progs) != 1 || f.Entry != 0x400000+120 {
			t.Errorf("%s: machine %v type %v progs %d entry %#x", arch, f.Machine, f.Type, len(f.Progs), f.Entry)
		}
	}
	if pauseCode("mips") != nil {
		t.Error("an unknown architecture has code")
	}
	if pauseCode(runtime.GOARCH) == nil {
		t.Skipf("no pause program for %s", runtime.GOARCH)
	}
	path := filepath.Join(t.TempDir(), "pause")
	if err := os.WriteFile(path, pauseELF(pauseCode(runtime.GOARCH)), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path)
	if err := cmd.Start(); err != nil {
		t.Fatalf("run the pause program: %v", err)
	}
	// It waits in pause(2); a signal it does not handle ends it. Exiting
	// by itself before the signal would show as an exit status instead.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("pause program ended with %v (%v); want killed by SIGTERM", cmd.ProcessState, err)
	}
}
