package isolation

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The default seccomp filter of isolated tasks: a denylist of the system
// calls that reach the kernel's most sensitive or least hardened parts
// (keyrings, module and kexec loading, mounts, namespaces, tracing, eBPF,
// perf, userfaultfd, io_uring, clocks, swap, reboot), which fail with
// EPERM. Most are refused anyway to a task without the capabilities
// (dropCapabilities); the filter also covers what an unprivileged process
// may do (unshare a user namespace, keyctl, bpf, perf_event_open,
// userfaultfd, io_uring) and a task that runs as root with extra
// capabilities. Everything else is allowed. A system call of another ABI
// (32-bit x86 on amd64, x32) is refused: the numbers below are the
// native ones.
//
// clone(2) is allowed unless it asks for a new namespace; clone3(2) passes
// its flags in memory the filter cannot read, so it fails with ENOSYS and
// the C library falls back to clone(2), as container runtimes do.

// deniedSyscalls are the system calls the default filter refuses.
var deniedSyscalls = []uintptr{
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_PTRACE, unix.SYS_PERSONALITY,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_FSOPEN, unix.SYS_FSMOUNT,
	unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_ACCT, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_QUOTACTL, unix.SYS_VHANGUP,
}

// DeniedSyscallNames names deniedSyscalls, for documentation and tests.
var DeniedSyscallNames = []string{
	"keyctl", "add_key", "request_key", "ptrace", "personality", "unshare", "setns",
	"mount", "umount2", "pivot_root", "fsopen", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
	"swapon", "swapoff", "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "quotactl", "vhangup",
}

// namespaceCloneFlags are the flags of clone(2) that make new namespaces.
const namespaceCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// Offsets in struct seccomp_data.
const (
	seccompDataNR   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16 // low 32 bits on little-endian machines
)

func bpfStmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func bpfJump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// seccompProgram returns the default filter for the machine's ABI
// (auditArch); ok is false where none is defined.
func seccompProgram() (prog []unix.SockFilter, ok bool) {
	if auditArch == 0 {
		return nil, false
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	enosys := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
	// Layout: checks, then "allow" at index n-3, "ENOSYS" at n-2 and
	// "EPERM" at n-1; jumps are relative to the next instruction.
	var body []unix.SockFilter
	body = append(body,
		bpfStmt(ld, seccompDataArch),
		bpfJump(jeq, auditArch, 1, 0),
		bpfStmt(ret, eperm), // another ABI
		bpfStmt(ld, seccompDataNR),
	)
	if x32Bit != 0 {
		body = append(body, bpfJump(jge, x32Bit, 0xff, 0)) // patched below
	}
	for _, nr := range deniedSyscalls {
		body = append(body, bpfJump(jeq, uint32(nr), 0xff, 0)) // patched below
	}
	body = append(body,
		bpfJump(jeq, uint32(unix.SYS_CLONE3), 0xfe, 0), // to ENOSYS, patched below
		bpfJump(jeq, uint32(unix.SYS_CLONE), 0, 2),
		bpfStmt(ld, seccompDataArg0),
		bpfJump(jset, namespaceCloneFlags, 0xff, 0), // patched below
	)
	body = append(body, bpfStmt(ret, allow), bpfStmt(ret, enosys), bpfStmt(ret, eperm))
	n := len(body)
	for i := range body {
		switch body[i].Jt {
		case 0xff:
			body[i].Jt = uint8(n - 1 - i - 1)
		case 0xfe:
			body[i].Jt = uint8(n - 2 - i - 1)
		}
	}
	if n > 255 {
		panic("seccomp filter too long for its jumps")
	}
	return body, true
}

// installSeccomp sets no_new_privs and loads the default seccomp filter,
// on every thread of the process (TSYNC): the thread that execve's the
// task passes both to it. Where no filter is defined for the machine's
// ABI only no_new_privs is set.
func installSeccomp() error {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	prog, ok := seccompProgram()
	if !ok {
		return nil
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("load the seccomp filter: %w", errno)
	}
	return nil
}
