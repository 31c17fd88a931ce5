package isolation

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// seccompProbeEnv makes the test binary, run as a task, try the system
// calls of seccompProbe and report how each went (see TestMain).
const seccompProbeEnv = "DROVER_TEST_SECCOMP_PROBE"

// seccompProbe runs in the task: it prints the process's NoNewPrivs and
// Seccomp status lines, then "<call> <errno or ok>" for a few denied
// system calls and for getpid, which must work.
func seccompProbe() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "NoNewPrivs:") || strings.HasPrefix(line, "Seccomp:") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	report := func(name string, err error) {
		if err == nil {
			fmt.Println(name, "ok")
			return
		}
		fmt.Println(name, unix.ErrnoName(err.(syscall.Errno)))
	}
	_, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd), 0) // the session keyring
	report("keyctl", errnoOrNil(e))
	_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	report("unshare", errnoOrNil(e))
	_, _, e = unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	report("personality", errnoOrNil(e))
	_, _, e = unix.RawSyscall(unix.SYS_USERFAULTFD, 0, 0, 0)
	report("userfaultfd", errnoOrNil(e))
	_, _, e = unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0)
	report("getpid", errnoOrNil(e))
	return 0
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestSeccompDefaultFilter runs the test binary as a task (as nobody and
// as root) and checks that no_new_privs is set, the filter is loaded, the
// denied system calls fail with EPERM and the others work.
func TestSeccompDefaultFilter(t *testing.T) {
	layout := needIsolation(t)
	if auditArch == 0 {
		t.Skip("no seccomp filter is defined for this machine's ABI")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"nobody", "root"} {
		t.Run(user, func(t *testing.T) {
			out, status, _ := runIsolated(t, layout, Resources{}, "/local/probe", func(s *Spec) {
				s.Path, s.Args = "/local/probe", nil
				s.Env = append(s.Env, seccompProbeEnv+"=1")
				if user == "root" {
					s.UID, s.GID, s.Groups = 0, 0, nil
				}
				copyFile(t, exe, filepath.Join(s.RootDir, "local", "probe"))
			})
			if status.ExitStatus() != 0 {
				t.Fatalf("probe exited %d: %s", status.ExitStatus(), out)
			}
			for _, want := range []string{
				"NoNewPrivs: 1", "Seccomp: 2",
				"keyctl EPERM", "unshare EPERM", "personality EPERM", "userfaultfd EPERM", "getpid ok",
			} {
				if !strings.Contains(out, want+"\n") {
					t.Errorf("the task's output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestSeccompProgramJumps(t *testing.T) {
	prog, ok := seccompProgram()
	if !ok {
		t.Skip("no seccomp filter is defined for this machine's ABI")
	}
	if len(DeniedSyscallNames) != len(deniedSyscalls) {
		t.Fatalf("%d names for %d denied system calls", len(DeniedSyscallNames), len(deniedSyscalls))
	}
	for i, ins := range prog {
		if ins.Code&0x07 == unix.BPF_JMP && (int(ins.Jt)+i+1 >= len(prog) || int(ins.Jf)+i+1 >= len(prog)) {
			t.Errorf("instruction %d jumps out of the program: %+v", i, ins)
		}
	}
	if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM) {
		t.Errorf("the program ends with %+v, want the EPERM return", last)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
