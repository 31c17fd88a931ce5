package isolation

import "golang.org/x/sys/unix"

// auditArch is the native ABI's seccomp architecture; x32Bit marks the
// x32 ABI's system call numbers, which the filter refuses.
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)
