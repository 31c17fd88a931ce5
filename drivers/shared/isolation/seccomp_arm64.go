package isolation

import "golang.org/x/sys/unix"

// auditArch is the native ABI's seccomp architecture; arm64 has no x32
// variant.
const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)
